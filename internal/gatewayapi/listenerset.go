package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	networking "istio.io/api/networking/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

const annParentNamespace = model.AnnotationParentNamespace

// listenerOwner is the object a listener is written in: a Gateway, or a
// ListenerSet that adds listeners to one (docs/semantics/gateway-api.md
// §G2.7). base is the index of its first listener among its Gateway's
// merged listeners.
type listenerOwner struct {
	kind string
	meta *model.ObjectMeta
	path model.Path
	base int
	// gw and gwTLS are the Gateway the listeners belong to and its
	// spec.tls, whose frontend validation applies to them all.
	gw    *model.ObjectMeta
	gwTLS *gwv1.GatewayTLSConfig
	// ctl is the controller of the Gateway's class.
	ctl string
}

func (o listenerOwner) name() string { return o.meta.Namespace + "/" + o.meta.Name }

// listenerTemplates are the findings about one owner's listeners.
type listenerTemplates struct {
	rejected, collides, cert *diag.Message
}

func (o listenerOwner) templates() listenerTemplates {
	if o.kind == "ListenerSet" {
		return listenerTemplates{diag.SetListenerRejected, diag.SetListenerCollides, diag.SetCertificateRefBad}
	}
	return listenerTemplates{diag.ListenerRejected, diag.ListenerCollides, diag.CertificateRefBad}
}

// routedListener reports whether istiod makes an Istio Gateway of a
// listener, for routes to attach to: not of a waypoint's, nor of an
// east-west gateway's HBONE listener on 15008, which carry ambient
// traffic routes do not configure.
func routedListener(ctl string, l gwv1.Listener) bool {
	switch ctl {
	case ControllerWaypoint:
		return false
	case ControllerEastWest:
		return l.Port != hbonePort
	}
	return true
}

// entryListener is a ListenerSet listener as a Gateway listener; HTTP and
// HTTPS without a port get their well-known ones.
func entryListener(e gwv1.ListenerEntry) gwv1.Listener {
	l := gwv1.Listener(e)
	if l.Port == 0 {
		switch l.Protocol {
		case gwv1.HTTPProtocolType:
			l.Port = 80
		case gwv1.HTTPSProtocolType:
			l.Port = 443
		}
	}
	return l
}

// attachedSets are the ListenerSets whose parentRef names the Gateway and
// whose namespace its allowedListeners admit, oldest first then by
// namespace/name, the order their listeners merge in. The others naming
// it are reported.
func (c *converter) attachedSets(kgw *model.KubeGateway, ctl string) []*model.ListenerSet {
	var out []*model.ListenerSet
	for _, ls := range c.listenerSets {
		p := ls.Spec.ParentRef
		group, kind, ns := refTarget(p.Group, p.Kind, p.Namespace, model.GroupGatewayAPI, "Gateway", ls.Namespace)
		if group != model.GroupGatewayAPI || kind != "Gateway" || ns != kgw.Namespace || string(p.Name) != kgw.Name {
			continue
		}
		why := c.listenersRefused(kgw, ls.Namespace)
		if ambientControllers[ctl] != "" {
			why = fmt.Sprintf("the %q GatewayClass does not support ListenerSet", kgw.Spec.GatewayClassName)
		}
		if why != "" {
			c.report(diag.ListenerSetNotAllowed.At(ls.RefAt(model.ParsePath("spec.parentRef")), ls.Namespace+"/"+ls.Name, kgw.Namespace+"/"+kgw.Name, why))
			continue
		}
		out = append(out, ls)
	}
	slices.SortStableFunc(out, func(a, b *model.ListenerSet) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// hasListenerSet reports whether the input holds the ListenerSet.
func (c *converter) hasListenerSet(key nsName) bool {
	return slices.ContainsFunc(c.listenerSets, func(ls *model.ListenerSet) bool { return ls.Namespace == key.ns && ls.Name == key.name })
}

// listenersRefused says why a Gateway's allowedListeners leave out a
// namespace, "" when they admit it.
func (c *converter) listenersRefused(kgw *model.KubeGateway, ns string) string {
	al := kgw.Spec.AllowedListeners
	if al == nil || al.Namespaces == nil {
		return "the Gateway has no allowedListeners, which admits none"
	}
	from := gwv1.NamespacesFromSelector
	if al.Namespaces.From != nil {
		from = *al.Namespaces.From
	}
	switch from {
	case gwv1.NamespacesFromAll:
		return ""
	case gwv1.NamespacesFromSame:
		if ns == kgw.Namespace {
			return ""
		}
		return "allowedListeners admit the Gateway's own namespace only"
	case gwv1.NamespacesFromSelector:
		if al.Namespaces.Selector == nil {
			return "allowedListeners select namespaces without a selector"
		}
		sel, err := metav1.LabelSelectorAsSelector(al.Namespaces.Selector)
		lbls, known := c.opts.Namespaces[ns]
		if err == nil && known && sel.Matches(namespaceLabels(ns, lbls)) {
			return ""
		}
		return "allowedListeners' selector does not match namespace " + ns
	}
	return "allowedListeners admit no namespace (from: " + string(from) + ")"
}

// namespaceLabels are a namespace's labels with the name label the API
// server adds.
func namespaceLabels(name string, lbls map[string]string) labels.Set {
	set := labels.Set{"kubernetes.io/metadata.name": name}
	for k, v := range lbls {
		set[k] = v
	}
	return set
}

// addListener converts listener i of an owner joining gw: its status, the
// Istio Gateway istiod makes of it, the parent routes attach to. It
// reports whether the listener is programmed.
func (c *converter) addListener(gw *Gateway, o listenerOwner, i int, l gwv1.Listener, conflicts map[int]conflict, sa string) bool {
	ln := &Listener{Name: string(l.Name), Index: i, Port: int32(l.Port), Protocol: string(l.Protocol)}
	if o.kind == "ListenerSet" {
		ln.ListenerSet = o.name()
	}
	if l.Hostname != nil {
		ln.Hostname = string(*l.Hostname)
	}
	gw.Listeners = append(gw.Listeners, ln)
	path := o.path.Index(i)
	if cf, ok := conflicts[o.base+i]; ok {
		ln.Conditions = []Condition{
			{Type: "Accepted", Reason: cf.reason, Message: "Listener conflicts with " + cf.winner},
			{Type: "Conflicted", Status: true, Reason: cf.reason, Message: "Listener conflicts with " + cf.winner},
			{Type: "Programmed", Reason: "Invalid", Message: "Listener conflicts with " + cf.winner},
		}
		c.report(o.templates().collides.At(o.meta.RefAt(path), string(l.Name), o.name(), int(l.Port), cf.reason, cf.winner, cf.why))
		return false
	}
	server, ok := c.listener(o, ln, l, path)
	if server == nil || !routedListener(o.ctl, l) {
		return ok
	}
	ns := o.meta.Namespace
	ig := &model.Gateway{ObjectMeta: derived("networking.istio.io/v1", "Gateway", ns,
		o.meta.Name+"~"+generatedSuffix+"~"+string(l.Name), o.meta, path, ""),
		Spec: &networking.Gateway{Servers: []*networking.Server{server}}}
	ig.Annotations = map[string]string{
		annParents:          o.kind + "/" + o.meta.Name + "/" + string(l.Name) + "." + ns,
		annGatewaySemantics: "gateway",
		annGatewayService:   strings.Join(gw.Services, ","),
		annServiceAccount:   sa,
	}
	if o.kind == "ListenerSet" {
		ig.Annotations[annParentNamespace] = gw.Object.Namespace
	}
	if ok {
		// istiod keeps the Istio Gateway of a programmed listener
		// only; routes still attach to the others, to no effect.
		ln.Istio = ig
		c.out = append(c.out, ig)
	}
	allowed, _ := supportedKinds(l)
	key := parentKey{o.kind, nsName{ns, o.meta.Name}}
	c.parents[key] = append(c.parents[key], &parentInfo{
		gw: gw, owner: o.kind + " " + o.name(), listener: ln, internalName: ns + "/" + ig.Name, allowedKinds: allowed,
		hostnames: server.Hosts, originalHostname: ln.Hostname, section: string(l.Name), port: int32(l.Port), protocol: l.Protocol,
	})
	return ok
}
