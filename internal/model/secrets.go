package model

// A SecretSource is what the input says of a Secret in the cluster: the
// Secret itself (its keys known), or an object a controller turns into
// one (a cert-manager Certificate, a SealedSecret, an ExternalSecret; its
// keys not known).
type SecretSource struct {
	Object *ObjectMeta
	Secret *Secret
}

// SecretSources indexes, by "namespace/name", the Secrets of the input
// and the objects that create Secrets, the first source of each name.
func SecretSources(objs []Object) map[string]SecretSource {
	out := map[string]SecretSource{}
	add := func(ns, name string, c SecretSource) {
		if _, ok := out[ns+"/"+name]; !ok && name != "" {
			out[ns+"/"+name] = c
		}
	}
	for _, o := range objs {
		m := o.Meta()
		switch x := o.(type) {
		case *Secret:
			add(m.Namespace, m.Name, SecretSource{m, x})
		case *Unknown:
			spec, _ := x.Raw["spec"].(map[string]any)
			switch m.Kind {
			case "Certificate":
				name, _ := spec["secretName"].(string)
				add(m.Namespace, name, SecretSource{Object: m})
			case "SealedSecret":
				add(m.Namespace, m.Name, SecretSource{Object: m})
			case "ExternalSecret":
				target, _ := spec["target"].(map[string]any)
				name, _ := target["name"].(string)
				if name == "" {
					name = m.Name
				}
				add(m.Namespace, name, SecretSource{Object: m})
			}
		}
	}
	return out
}
