package emit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/meshc/meshc/internal/resolve"
)

// maxPathElem bounds the file name a proxy gets, below the 255 bytes most
// file systems allow, leaving room for ".json" and the xDS file names.
const maxPathElem = 200

// layout is where each proxy of a build goes: NAMESPACE/NAME, unless
// several proxies of one namespace share a name (a Pod and a Deployment
// may), in which case each is NAMESPACE/NAME_KIND. A name too long for a
// file is cut and given a hash of the whole. Kubernetes names have no
// underscore, so neither form can meet a plain name.
type layout map[*resolve.Proxy]string

// Layout fixes the output paths of views for the next Write and Render
// calls; without it a proxy goes to NAMESPACE/NAME, shortened if need be.
func (e *Emitter) Layout(views []*resolve.ProxyView) error {
	seen := map[string]int{}
	for _, v := range views {
		seen[v.Proxy.Namespace+"/"+v.Proxy.Name]++
	}
	l := make(layout, len(views))
	taken := map[string]*resolve.Proxy{}
	for _, v := range views {
		p := v.Proxy
		path, err := proxyPath(p, seen[p.Namespace+"/"+p.Name] > 1)
		if err != nil {
			return err
		}
		if other := taken[path]; other != nil {
			return fmt.Errorf("%s %s and %s %s would both be written to %s", other.Kind, other.ID(), p.Kind, p.ID(), path)
		}
		taken[path], l[p] = p, path
	}
	e.paths = l
	return nil
}

// of is p's path, without extension, slash-separated.
func (l layout) of(p *resolve.Proxy) (string, error) {
	if path, ok := l[p]; ok {
		return path, nil
	}
	return proxyPath(p, false)
}

func proxyPath(p *resolve.Proxy, qualify bool) (string, error) {
	// Only names Kubernetes admits become paths: they never climb out of
	// a directory or name a hidden file.
	if errs := validation.IsDNS1123Label(p.Namespace); len(errs) > 0 {
		return "", fmt.Errorf("namespace of proxy %s: %q is not a valid name for a directory: %s", p.ID(), p.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(p.Name); len(errs) > 0 {
		return "", fmt.Errorf("proxy %s: %q is not a valid name for a file: %s", p.ID(), p.Name, strings.Join(errs, "; "))
	}
	name := p.Name
	if qualify {
		name += "_" + strings.ToLower(p.Kind)
	}
	if len(name) > maxPathElem {
		sum := sha256.Sum256([]byte(name))
		name = name[:maxPathElem-17] + "_" + hex.EncodeToString(sum[:8])
	}
	return p.Namespace + "/" + name, nil
}
