package gatewayapi

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/types/known/wrapperspb"
	networking "istio.io/api/networking/v1alpha3"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/meshc/meshc/internal/certcheck"
	"github.com/meshc/meshc/internal/model"
)

// frontendValidation applies the Gateway's spec.tls.frontend client
// certificate validation to a terminating listener's server TLS
// (docs/semantics/gateway-api.md §G2.4): the port's perPort entry, else
// the default. A CA reference istiod cannot use is an error that leaves
// the listener unprogrammed; nil when there is none or it resolves.
func (c *converter) frontendValidation(o listenerOwner, l gwv1.Listener, out *networking.ServerTLSSettings) *tlsError {
	cfg, path := frontendConfig(o.gwTLS, l.Port)
	if cfg == nil || cfg.Validation == nil || len(cfg.Validation.CACertificateRefs) == 0 {
		return nil
	}
	refsPath := path.Key("validation").Key("caCertificateRefs")
	if len(cfg.Validation.CACertificateRefs) > 1 {
		return &tlsError{at: o.gw, ca: true, path: refsPath, ref: "caCertificateRefs", reason: "InvalidCACertificateRef", message: "only one caCertificateRef is supported"}
	}
	ca, err := c.caCertificate(o, cfg.Validation.CACertificateRefs[0])
	if err != nil {
		err.at, err.path, err.ca = o.gw, refsPath.Index(0), true
		return err
	}
	out.Mode, out.InsecureSkipVerify = networking.ServerTLSSettings_MUTUAL, wrapperspb.Bool(false)
	if cfg.Validation.Mode == gwv1.AllowInsecureFallback {
		out.Mode, out.InsecureSkipVerify = networking.ServerTLSSettings_OPTIONAL_MUTUAL, wrapperspb.Bool(true)
	}
	out.CaCertCredentialName = ca
	// The listener's own terminate-mode option has the last word, and
	// always verifies what a client presents.
	switch l.TLS.Options[terminateModeOption] {
	case "MUTUAL":
		out.Mode, out.InsecureSkipVerify = networking.ServerTLSSettings_MUTUAL, wrapperspb.Bool(false)
	case "OPTIONAL_MUTUAL":
		out.Mode, out.InsecureSkipVerify = networking.ServerTLSSettings_OPTIONAL_MUTUAL, wrapperspb.Bool(false)
	}
	return nil
}

// frontendConfig is the frontend TLS configuration of a port, with its
// path in the Gateway: the perPort entry for it, else the default.
func frontendConfig(t *gwv1.GatewayTLSConfig, port gwv1.PortNumber) (*gwv1.TLSConfig, model.Path) {
	if t == nil || t.Frontend == nil {
		return nil, nil
	}
	path := model.Path{}.Key("spec").Key("tls").Key("frontend")
	for i := range t.Frontend.PerPort {
		if t.Frontend.PerPort[i].Port == port {
			return &t.Frontend.PerPort[i].TLS, path.Key("perPort").Index(i).Key("tls")
		}
	}
	return &t.Frontend.Default, path.Key("default")
}

// caCertificate resolves a frontend CA reference to the SDS name istiod
// gives it: configmap://ns/name-cacert for a ConfigMap,
// kubernetes-gateway://ns/name-cacert for a Secret. Another namespace is
// judged first, so that a refused reference says nothing of what exists
// there; istiod's grant check takes the name with its -cacert suffix.
func (c *converter) caCertificate(o listenerOwner, ref gwv1.ObjectReference) (string, *tlsError) {
	own := o.meta.Namespace
	ns := own
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	name := string(ref.Name)
	shown := ns + "/" + name
	secret := ref.Group == "" && ref.Kind == "Secret"
	kind, scheme := "ConfigMap", "configmap"
	if secret {
		kind, scheme = "Secret", "kubernetes-gateway"
	}
	if ns != own && !c.granted(o.kind, own, "", kind, ns, name+"-cacert") {
		return "", &tlsError{ref: shown, reason: "RefNotPermitted",
			message: fmt.Sprintf("caCertificateRef %s/%s not accessible to a Gateway in namespace %q (missing a ReferenceGrant?)", ns, name, own)}
	}
	var problem string
	switch {
	case ref.Group == "" && ref.Kind == "ConfigMap":
		cm := c.configMaps[nsName{ns, name}]
		switch {
		case cm == nil && c.configMapNs[ns]:
			return "", &tlsError{ref: shown, reason: "InvalidCACertificateRef", message: fmt.Sprintf("CA configmap %s not found: the input holds ConfigMaps of %s but not this one", shown, ns)}
		case cm != nil:
			problem = certcheck.Root(certcheck.Strings(cm.Data))
		}
	case secret:
		s := c.secrets[nsName{ns, name}]
		switch {
		case c.secretMissing(ns, name):
			return "", &tlsError{ref: shown, reason: "InvalidCACertificateRef", message: fmt.Sprintf("CA secret %s not found: the input holds Secrets of %s but not this one", shown, ns)}
		case s != nil:
			problem = s.CAProblem
		}
	default:
		return "", &tlsError{ref: shown, reason: "InvalidCACertificateKind",
			message: fmt.Sprintf("invalid CA certificate reference %s/%s %s, only secret and configmap are allowed", ref.Group, ref.Kind, shown)}
	}
	if problem != "" {
		return "", &tlsError{ref: shown, reason: "InvalidCACertificateRef", message: "invalid CA certificate reference " + shown + ": " + problem}
	}
	return scheme + "://" + ns + "/" + name + "-cacert", nil
}

// insecureFrontend reports whether the Gateway lets some port accept
// clients without a valid certificate, which istiod records as a Gateway
// condition.
func insecureFrontend(t *gwv1.GatewayTLSConfig) bool {
	if t == nil || t.Frontend == nil {
		return false
	}
	insecure := func(c gwv1.TLSConfig) bool {
		return c.Validation != nil && c.Validation.Mode == gwv1.AllowInsecureFallback
	}
	return insecure(t.Frontend.Default) || slices.ContainsFunc(t.Frontend.PerPort, func(p gwv1.TLSPortConfig) bool { return insecure(p.TLS) })
}
