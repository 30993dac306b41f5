package load

import (
	"path/filepath"
	"strings"
)

// pseudoByPath names the pseudo-filesystem mounted where real is by
// convention (/proc, /sys, /dev), or "": the fallback where the file
// system cannot be asked.
func pseudoByPath(real string) string {
	for _, m := range []struct{ dir, name string }{{"/proc", "proc"}, {"/sys", "sysfs"}, {"/dev", "devfs"}} {
		if real == m.dir || strings.HasPrefix(real, m.dir+string(filepath.Separator)) {
			return m.name
		}
	}
	return ""
}
