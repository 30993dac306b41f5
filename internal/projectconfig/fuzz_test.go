package projectconfig

import (
	"strings"
	"testing"
)

// FuzzProjectConfig feeds arbitrary bytes to the .meshc.yaml reader: it
// must never panic, and whatever it refuses it refuses with an error that
// names the file, so a user knows which config to fix.
func FuzzProjectConfig(f *testing.F) {
	for _, s := range []string{
		"exclude: [charts/**]\nfailOn: warning\nmeshConfig: istio/mesh.yaml\n",
		"suppress:\n- {code: MC4001, object: 'legacy/*', reason: later, expires: 2027-03-31}\n",
		"suppress:\n- {code: IST0101, reason: r}\n- {code: MC9999}\n",
		"hnc: {excludedNamespaces: [a], tkeProjects: true, tkeProjectHomes: {p: ns}}\n",
		"revisions: [default, 1-24]\ninjectNamespaces: [payments]\nplaceholderVIPs: 10.96.0.0/12\n",
		"suppress: {code: MC4001}\n",
		"bogus: 1\n",
		"a: &a [*a]\n",
		"---\n---\nexclude: x\n",
		"suppress:\n- code: MC4001\n  reason: r\n  expires: tomorrow\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("dir/.meshc.yaml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "dir/.meshc.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if _, err := c.Rules(); err != nil {
			t.Fatalf("Parse accepted rules that Rules refuses: %v", err)
		}
	})
}
