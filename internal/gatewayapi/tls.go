package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	networking "istio.io/api/networking/v1alpha3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/diag"
	"github.com/meshc/meshc/internal/model"
)

// tlsError is a certificate reference istiod cannot resolve.
type tlsError struct {
	// at is the object the path is in, when not the listener's owner (a
	// frontend CA reference is in the Gateway).
	at *model.ObjectMeta
	// ca marks an error of the Gateway's frontend CA reference.
	ca bool

	path            model.Path
	ref             string
	reason, message string
}

const terminateModeOption = "gateway.istio.io/tls-terminate-mode"

// serverTLS is the server TLS istiod makes of a listener's tls section
// (docs/semantics/gateway-api.md §G2.4); nil without one.
func (c *converter) serverTLS(o listenerOwner, l gwv1.Listener, lpath model.Path) (*networking.ServerTLSSettings, []tlsError) {
	t := l.TLS
	if t == nil {
		return nil, nil
	}
	out := &networking.ServerTLSSettings{}
	mode := gwv1.TLSModeTerminate
	if t.Mode != nil {
		mode = *t.Mode
	}
	if mode == gwv1.TLSModePassthrough {
		out.Mode = networking.ServerTLSSettings_PASSTHROUGH
		if t.Options["gateway.istio.io/listener-protocol"] == "auto-passthrough" || crossNetwork(o.meta.Labels, l.Port) {
			out.Mode = networking.ServerTLSSettings_AUTO_PASSTHROUGH
		}
		return out, nil
	}
	out.Mode = networking.ServerTLSSettings_SIMPLE
	switch t.Options[terminateModeOption] {
	case "MUTUAL":
		out.Mode = networking.ServerTLSSettings_MUTUAL
	case "OPTIONAL_MUTUAL":
		out.Mode = networking.ServerTLSSettings_OPTIONAL_MUTUAL
	case "ISTIO_SIMPLE":
		out.CredentialName = "builtin://"
		return out, nil
	case "ISTIO_MUTUAL":
		out.Mode = networking.ServerTLSSettings_ISTIO_MUTUAL
		return out, nil
	}
	refsPath := lpath.Key("tls").Key("certificateRefs")
	if len(t.CertificateRefs) > 2 {
		return out, []tlsError{{path: refsPath, ref: "certificateRefs", reason: "InvalidCertificateRef", message: "TLS mode can only support up to 2 server certificates"}}
	}
	var names []string
	var errs []tlsError
	for i, ref := range t.CertificateRefs {
		name, err := c.certificate(o, ref)
		if err != nil {
			err.path = refsPath.Index(i)
			errs = append(errs, *err)
			continue
		}
		names = append(names, name)
	}
	switch len(names) {
	case 0:
		return out, errs
	case 1:
		out.CredentialName = names[0]
	default:
		out.CredentialNames = names
	}
	// A listener with one good certificate of two is still programmed.
	if err := c.frontendValidation(o, l, out); err != nil {
		return out, []tlsError{*err}
	}
	return out, nil
}

// crossNetwork says whether a passthrough listener on port is the
// cross-network port of an east-west gateway: its owner is labelled with a
// network (topology.istio.io/network), and the port is the one its label
// networking.istio.io/gatewayPort names, 15443 by default. istiod makes
// such a listener AUTO_PASSTHROUGH (docs/semantics/gateway-api.md §G2.4).
func crossNetwork(labels map[string]string, port gwv1.PortNumber) bool {
	if _, ok := labels["topology.istio.io/network"]; !ok {
		return false
	}
	return strconv.Itoa(int(port)) == cmp.Or(labels["networking.istio.io/gatewayPort"], "15443")
}

// certificate resolves one certificateRef to the credential name istiod
// gives it (kubernetes-gateway://namespace/name).
func (c *converter) certificate(o listenerOwner, ref gwv1.SecretObjectReference) (string, *tlsError) {
	own := o.meta.Namespace
	group, kind, ns := refTarget(ref.Group, ref.Kind, ref.Namespace, "", "Secret", own)
	shown := ns + "/" + string(ref.Name)
	if ns != own && !c.granted(o.kind, own, "", "Secret", ns, string(ref.Name)) {
		return "", &tlsError{ref: shown, reason: "RefNotPermitted",
			message: fmt.Sprintf("certificateRef %s/%s not accessible to a %s in namespace %q (missing a ReferenceGrant?)", ref.Name, ns, o.kind, own)}
	}
	if group != "" || kind != "Secret" {
		return "", &tlsError{ref: shown, reason: "InvalidCertificateRef",
			message: fmt.Sprintf("invalid certificate reference %s/%s %s, only secret is allowed", group, kind, shown)}
	}
	// istiod reads the Secret before it programs the listener.
	switch s := c.secrets[nsName{ns, string(ref.Name)}]; {
	case c.secretMissing(ns, string(ref.Name)):
		return "", &tlsError{ref: shown, reason: "InvalidCertificateRef",
			message: fmt.Sprintf("secret %s not found: the input holds Secrets of %s but not this one, and istiod programs no listener whose Secret it cannot read", shown, ns)}
	case s == nil:
	case s.CertProblem != "":
		return "", &tlsError{ref: shown, reason: "InvalidCertificateRef", message: "secret " + shown + ": " + s.CertProblem}
	}
	return "kubernetes-gateway://" + ns + "/" + string(ref.Name), nil
}

// secretMissing reports whether Secret ns/name counts as missing. Most
// repositories keep Secrets out of git, so one absent from the input is
// missing only where the input holds Secrets, or objects that make them,
// of its namespace; elsewhere it is taken to live in the cluster. One a
// controller makes from an input object is there, its contents unknown.
func (c *converter) secretMissing(ns, name string) bool {
	k := nsName{ns, name}
	return c.secrets[k] == nil && !c.madeSecrets[k] && c.secretNs[ns]
}

// granted reports whether a ReferenceGrant in toNs lets objects of
// fromKind in fromNs reference toKind (group toGroup) named name.
func (c *converter) granted(fromKind, fromNs, toGroup, toKind, toNs, name string) bool {
	for _, g := range c.grants {
		if g.Namespace != toNs {
			continue
		}
		from := slices.ContainsFunc(g.Spec.From, func(f gwv1.ReferenceGrantFrom) bool {
			return string(f.Group) == model.GroupGatewayAPI && string(f.Kind) == fromKind && string(f.Namespace) == fromNs
		})
		if !from {
			continue
		}
		if slices.ContainsFunc(g.Spec.To, func(t gwv1.ReferenceGrantTo) bool {
			return string(t.Group) == toGroup && string(t.Kind) == toKind && (t.Name == nil || string(*t.Name) == name)
		}) {
			return true
		}
	}
	return false
}

// backendClientCertificate checks a Gateway's
// spec.tls.backend.clientCertificateRef as istiod does: a Secret (of the
// Gateway's namespace, or another one's that a ReferenceGrant opens) that
// holds a certificate and its key. istiod only validates it — no proxy
// presents it to backends — so a bad one sets the Gateway's ResolvedRefs
// condition and changes nothing else (docs/semantics/gateway-api.md
// §G2.4). The result is that condition, nil when the reference is good,
// absent or cannot be judged.
func (c *converter) backendClientCertificate(kgw *model.KubeGateway) *Condition {
	if kgw.Spec.TLS == nil || kgw.Spec.TLS.Backend == nil || kgw.Spec.TLS.Backend.ClientCertificateRef == nil {
		return nil
	}
	ref := *kgw.Spec.TLS.Backend.ClientCertificateRef
	own := kgw.Namespace
	group, kind, ns := refTarget(ref.Group, ref.Kind, ref.Namespace, "", "Secret", own)
	shown := ns + "/" + string(ref.Name)
	bad := func(reason, why string) *Condition {
		c.report(diag.ClientCertificateRefBad.At(kgw.RefAt(model.ParsePath("spec.tls.backend.clientCertificateRef")), own+"/"+kgw.Name, shown, reason, why))
		return &Condition{Type: "ResolvedRefs", Reason: reason, Message: why}
	}
	if group != "" || kind != "Secret" {
		return bad("InvalidClientCertificateRef", fmt.Sprintf("invalid clientCertificateRef %s/%s %s, only secret is allowed", group, kind, shown))
	}
	switch s := c.secrets[nsName{ns, string(ref.Name)}]; {
	case c.secretMissing(ns, string(ref.Name)):
		return bad("InvalidClientCertificateRef", fmt.Sprintf("invalid clientCertificateRef, secret %s not found (the input holds Secrets of %s but not this one)", shown, ns))
	case s != nil && s.CertProblem != "":
		return bad("InvalidClientCertificateRef", "invalid clientCertificateRef, secret "+shown+": "+s.CertProblem)
	}
	if ns != own && !c.granted("Gateway", own, "", "Secret", ns, string(ref.Name)) {
		return bad("RefNotPermitted", fmt.Sprintf("clientCertificateRef %s/%s not accessible to a Gateway in namespace %q (missing a ReferenceGrant?)", ref.Name, ns, own))
	}
	return nil
}
