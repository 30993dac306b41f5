package load

import (
	"io/fs"
	"path"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/inputfile"
	"github.com/meshc/meshc/internal/outdir"
)

// collectTree adds the input p of Options.FS: a file, or a directory
// walked through its entries. The tree's root bounds what its
// kustomizations read, as a repository's top does on disk.
func (c *collector) collectTree(p string) {
	name := path.Clean(p)
	c.root = "."
	fi, err := fs.Stat(c.fsys, name)
	switch {
	case err != nil:
		c.unreadable(name, "cannot read %s: %s", name, inputfile.Reason(err))
	case fi.IsDir() && outdir.IsEarlierBuildIn(c.fsys, name):
		c.unreadable(name, "%s is the output of meshc build, not manifests", name)
	case fi.IsDir():
		c.walkTree(name, "")
	default:
		// What is not a regular file is refused by the reader.
		c.addTree(name, false)
	}
}

// walkTree adds the manifests below dir, rel below the directory named as
// input. Only entries that are directories are walked: a link is passed
// over, so the walk ends where the tree does.
func (c *collector) walkTree(dir, rel string) {
	if c.addRendered(dir, dir) {
		return
	}
	entries, err := fs.ReadDir(c.fsys, dir)
	if err != nil {
		c.unreadable(dir, "cannot read directory %s: %s", dir, inputfile.Reason(err))
		return
	}
	// The templates of a Helm chart are not manifests until rendered.
	_, err = fs.Stat(c.fsys, path.Join(path.Dir(dir), "Chart.yaml"))
	template := path.Base(dir) == "templates" && err == nil
	for _, e := range entries {
		full, entryRel := path.Join(dir, e.Name()), path.Join(rel, e.Name())
		switch {
		case c.passedOver(entryRel):
		case e.IsDir() && outdir.IsEarlierBuildIn(c.fsys, full):
			c.skipped = append(c.skipped, diag.Skipped{File: full, Reason: diag.EarlierBuild})
		case e.IsDir():
			c.walkTree(full, entryRel)
		case e.Type().IsRegular() && isManifestName(e.Name()):
			c.addTree(full, template)
		}
	}
}

// addTree adds the file name of the tree, once.
func (c *collector) addTree(name string, template bool) {
	if !c.seen[name] {
		c.seen[name] = true
		c.addInput(input{name: name, path: name, template: template})
	}
}
