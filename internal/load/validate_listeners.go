package load

import (
	"net"
	"path"
	"slices"
	"strconv"
	"strings"

	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/model"
	"github.com/meshc/meshc/internal/protocol"
)

// gateway: istiod's ValidateGateway. A Gateway's name must be a DNS label
// (not a subdomain), since servers are named after it.
func (c *istioChecks) gateway(g *networking.Gateway, spec model.Path, name string) {
	if !isDNSLabel(name) {
		c.addf(model.Path{}.Key("metadata").Key("name"), "Gateway name %q is rejected by istiod's validation: it must be a DNS label (no dots)", name)
	}
	if len(g.GetServers()) == 0 {
		c.add(spec, "a Gateway without servers is rejected by istiod's validation: add a server")
	}
	names := map[string]bool{}
	for i, s := range g.GetServers() {
		at := spec.Key("servers").Index(i)
		c.server(s, at)
		if s.GetPort() == nil {
			continue
		}
		if n := s.GetPort().GetName(); names[n] {
			c.addf(at.Key("port").Key("name"), "server port name %q is used twice: istiod's validation rejects it; port names are unique in a Gateway", n)
		}
		names[s.GetPort().GetName()] = true
		if s.GetTls().GetHttpsRedirect() && !protocol.Parse(s.GetPort().GetProtocol()).IsHTTP() {
			c.warnf(at.Key("tls").Key("httpsRedirect"), "tls.httpsRedirect on a %s server: istiod warns, as it applies to HTTP servers only", s.GetPort().GetProtocol())
		}
	}
}

func (c *istioChecks) server(s *networking.Server, p model.Path) {
	if len(s.GetHosts()) == 0 {
		c.add(p.Key("hosts"), "a server without hosts is rejected by istiod's validation: add hosts (\"*\" for any)")
	}
	for i, h := range s.GetHosts() {
		c.nsHost(h, true, p.Key("hosts").Index(i))
	}
	pp := p.Key("port")
	port, bind := s.GetPort(), s.GetBind()
	portOK := port != nil
	if port == nil {
		c.add(p, "a server without port is rejected by istiod's validation")
	} else {
		if protocol.Parse(port.GetProtocol()) == protocol.Unsupported {
			c.unknownProtocol(port.GetProtocol(), pp.Key("protocol"))
			portOK = false
		}
		if port.GetNumber() > 0 || !strings.HasPrefix(bind, "unix://") {
			if n := port.GetNumber(); n < 1 || n > 65535 {
				c.port(int64(n), pp.Key("number"))
				portOK = false
			}
		}
		//lint:ignore SA1019 istiod rejects this deprecated field, so meshc reads it
		if port.GetTargetPort() > 0 {
			c.add(pp.Key("targetPort"), "targetPort on a Gateway server is rejected by istiod's validation: it has no effect; remove it")
			portOK = false
		}
		if port.GetName() == "" {
			c.add(pp, "a server port without name is rejected by istiod's validation: name it")
			portOK = false
		}
	}
	if addr, ok := strings.CutPrefix(bind, "unix://"); ok {
		c.unixAddress(addr, p.Key("bind"))
		if port.GetNumber() != 0 {
			c.add(pp.Key("number"), "a server bound to a unix socket with a port number is rejected by istiod's validation: use port number 0")
		}
	} else if bind != "" && !isIP(bind) {
		c.addf(p.Key("bind"), "bind %q is rejected by istiod's validation: use an IP or unix://PATH", bind)
	}
	c.serverTLS(s.GetTls(), p.Key("tls"))
	if !portOK {
		return
	}
	proto := protocol.Parse(port.GetProtocol())
	tls := s.GetTls()
	tlsProto := proto == protocol.HTTPS || proto == protocol.TLS
	switch {
	case tlsProto && tls == nil:
		c.addf(p, "a %s server without tls settings is rejected by istiod's validation: add tls", port.GetProtocol())
	case !tlsProto && tls != nil && proto.IsHTTP():
		// An HTTP server may carry tls only to redirect to HTTPS.
		passthrough := tls.GetMode() == networking.ServerTLSSettings_PASSTHROUGH || tls.GetMode() == networking.ServerTLSSettings_AUTO_PASSTHROUGH
		if !passthrough || tls.GetCaCertificates() != "" || tls.GetPrivateKey() != "" || tls.GetServerCertificate() != "" {
			c.add(p.Key("tls"), "tls settings on a plain-text HTTP server are rejected by istiod's validation: use protocol HTTPS, or keep only httpsRedirect")
		}
	case !tlsProto && tls != nil:
		c.addf(p.Key("tls"), "tls settings on a %s server are rejected by istiod's validation: use protocol HTTPS or TLS", port.GetProtocol())
	}
}

// nsHost: a Gateway server or Sidecar egress host, "namespace/dnsName"
// (Gateways also take a bare dnsName or an IP).
func (c *istioChecks) nsHost(h string, gateway bool, p model.Path) {
	ns, name, ok := strings.Cut(h, "/")
	if !ok {
		if !gateway {
			c.addf(p, "egress host %q is rejected by istiod's validation: write namespace/host, e.g. \"*/%s\" or \"./%s\"", h, h, h)
			return
		}
		c.hostPart(h, h, true, p)
		return
	}
	if ns == "" || name == "" {
		c.addf(p, "host %q is rejected by istiod's validation: namespace and host may not be empty", h)
	}
	trimmed := ns
	if !gateway {
		trimmed = strings.TrimPrefix(ns, "~")
	}
	if trimmed != "" && trimmed != "*" && trimmed != "." && !isDNSLabel(trimmed) {
		c.addf(p, "host %q is rejected by istiod's validation: namespace %q is not \"*\", \".\" or a namespace name", h, ns)
	}
	c.hostPart(h, name, gateway, p)
}

// hostPart: the dnsName of a namespace/dnsName host: a full name (not a
// short one), wildcards only as a whole first label; Gateways also take
// an IP.
func (c *istioChecks) hostPart(h, name string, gateway bool, p model.Path) {
	switch {
	case name != "*" && !strings.Contains(name, "."):
		c.addf(p, "host %q is rejected by istiod's validation: short names are not allowed; use the full name (name.namespace.svc.cluster.local)", h)
	case partialWildcard(name):
		c.addf(p, "host %q is rejected by istiod's validation: a wildcard must be a whole first label (\"*.example.com\")", h)
	default:
		if msg := wildcardDomainProblem(name); msg != "" && !(gateway && isIP(name)) {
			c.addf(p, "host %q is rejected by istiod's validation: %s", h, msg)
		}
	}
}

func (c *istioChecks) unixAddress(addr string, p model.Path) {
	switch {
	case addr == "":
		c.add(p, "an empty unix socket address is rejected by istiod's validation")
	case strings.HasPrefix(addr, "@"):
	case !path.IsAbs(addr) || strings.HasSuffix(addr, "/"):
		c.addf(p, "unix socket %q is rejected by istiod's validation: give an absolute file path", addr)
	}
}

// validCiphers are the cipher suite names Envoy knows; others are
// ignored with a warning.
var validCiphers = []string{"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305", "ECDHE-ECDSA-AES128-SHA",
	"ECDHE-RSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "ECDHE-RSA-AES256-SHA", "AES128-GCM-SHA256", "AES256-GCM-SHA384",
	"AES128-SHA", "AES256-SHA", "DES-CBC3-SHA"}

func validCipher(cs string) bool {
	if cs == "" || cs == "ALL" || !(cs[0] >= '0' && cs[0] <= '9' || cs[0] >= 'a' && cs[0] <= 'z' || cs[0] >= 'A' && cs[0] <= 'Z') {
		return true // operators such as "-X" or "+X" are passed to Envoy as they are
	}
	return slices.Contains(validCiphers, cs)
}

// serverTLS: istiod's rules for server TLS settings: certificates match
// the mode, one source of certificates, ciphers.
func (c *istioChecks) serverTLS(tls *networking.ServerTLSSettings, p model.Path) {
	if tls == nil {
		return
	}
	mode := tls.GetMode()
	if (tls.GetMinProtocolVersion() == networking.ServerTLSSettings_TLSV1_0 || tls.GetMinProtocolVersion() == networking.ServerTLSSettings_TLSV1_1) && len(tls.GetCipherSuites()) == 0 {
		c.warnf(p.Key("minProtocolVersion"), "minProtocolVersion %s without cipherSuites: istiod warns, as the default ciphers do not work below TLS 1.2; list compatible cipherSuites", tls.GetMinProtocolVersion())
	}
	var invalid, dup []string
	seen := map[string]bool{}
	for _, cs := range tls.GetCipherSuites() {
		switch {
		case !validCipher(cs):
			invalid = append(invalid, cs)
		case seen[cs]:
			dup = append(dup, cs)
		}
		seen[cs] = true
	}
	if len(invalid) > 0 {
		c.warnf(p.Key("cipherSuites"), "cipher suites %s are unknown: istiod warns and ignores them", quoteList(invalid))
	}
	if len(dup) > 0 {
		c.warnf(p.Key("cipherSuites"), "cipher suites %s are listed twice: istiod warns and ignores the repeats", quoteList(dup))
	}
	if mode == networking.ServerTLSSettings_ISTIO_MUTUAL {
		for _, f := range []struct {
			name string
			set  bool
		}{{"serverCertificate", tls.GetServerCertificate() != ""}, {"privateKey", tls.GetPrivateKey() != ""}, {"caCertificates", tls.GetCaCertificates() != ""},
			{"tlsCertificates", len(tls.GetTlsCertificates()) > 0}, {"credentialName", tls.GetCredentialName() != ""}, {"credentialNames", len(tls.GetCredentialNames()) > 0}} {
			if f.set {
				c.addf(p.Key(f.name), "%s with mode ISTIO_MUTUAL is rejected by istiod's validation: the mesh's certificates are used; remove it", f.name)
			}
		}
		return
	}
	if mode == networking.ServerTLSSettings_PASSTHROUGH || mode == networking.ServerTLSSettings_AUTO_PASSTHROUGH {
		if tls.GetCaCrl() != "" || tls.GetServerCertificate() != "" || tls.GetPrivateKey() != "" || tls.GetCaCertificates() != "" ||
			len(tls.GetTlsCertificates()) > 0 || tls.GetCredentialName() != "" || len(tls.GetCredentialNames()) > 0 {
			c.warnf(p, "certificates with mode %s: istiod warns and ignores them, as the proxy does not terminate TLS", mode)
		}
	}
	sources := 0
	for _, set := range []bool{tls.GetServerCertificate() != "" && tls.GetPrivateKey() != "", tls.GetCredentialName() != "", len(tls.GetCredentialNames()) > 0, len(tls.GetTlsCertificates()) > 0} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		c.add(p, "server tls with several certificate sources is rejected by istiod's validation: use one of credentialName, credentialNames, serverCertificate/privateKey, tlsCertificates")
	}
	terminating := mode == networking.ServerTLSSettings_SIMPLE || mode == networking.ServerTLSSettings_MUTUAL || mode == networking.ServerTLSSettings_OPTIONAL_MUTUAL
	if terminating && (tls.GetCredentialName() != "" || len(tls.GetCredentialNames()) > 0) {
		return
	}
	if terminating {
		what := "SIMPLE"
		if mode != networking.ServerTLSSettings_SIMPLE {
			what = mode.String()
			if tls.GetCaCertificates() == "" {
				c.addf(p, "tls mode %s without caCertificates (or credentialName) is rejected by istiod's validation: it needs the client CA", what)
			}
		}
		if len(tls.GetTlsCertificates()) > 2 {
			c.warnf(p.Key("tlsCertificates"), "%d tlsCertificates: istiod warns, as at most 2 server certificates are used", len(tls.GetTlsCertificates()))
		}
		certs := tls.GetTlsCertificates()
		if len(certs) == 0 {
			certs = []*networking.ServerTLSSettings_TLSCertificate{{ServerCertificate: tls.GetServerCertificate(), PrivateKey: tls.GetPrivateKey()}}
		}
		for _, cert := range certs {
			if cert.GetServerCertificate() == "" {
				c.addf(p, "tls mode %s without serverCertificate (or credentialName) is rejected by istiod's validation", what)
			}
			if cert.GetPrivateKey() == "" {
				c.addf(p, "tls mode %s without privateKey (or credentialName) is rejected by istiod's validation", what)
			}
		}
	}
	if tls.GetCaCrl() != "" {
		if tls.GetCredentialName() != "" {
			c.add(p.Key("caCrl"), "caCrl with credentialName is rejected by istiod's validation: put the CRL in the credential")
		}
		if mode == networking.ServerTLSSettings_SIMPLE {
			c.add(p.Key("caCrl"), "caCrl with mode SIMPLE is rejected by istiod's validation: CRLs check client certificates (MUTUAL)")
		}
	}
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// sidecar: istiod's ValidateSidecar.
func (c *istioChecks) sidecar(sc *networking.Sidecar, spec model.Path) {
	ws := sc.GetWorkloadSelector()
	c.workloadSelector(ws.GetLabels(), ws != nil, spec.Key("workloadSelector"), "Sidecar")
	if len(sc.GetEgress()) == 0 && len(sc.GetIngress()) == 0 && sc.GetOutboundTrafficPolicy() == nil && sc.GetInboundConnectionPool() == nil {
		c.add(spec, "a Sidecar with no egress, ingress, outboundTrafficPolicy or inboundConnectionPool is rejected by istiod's validation: it would configure nothing")
	}
	ports := map[uint32]bool{}
	for i, in := range sc.GetIngress() {
		at := spec.Key("ingress").Index(i)
		port := in.GetPort()
		if port == nil {
			c.add(at, "an ingress listener without port is rejected by istiod's validation")
			continue
		}
		pp := at.Key("port")
		//lint:ignore SA1019 istiod rejects this deprecated field, so meshc reads it
		if port.GetTargetPort() > 0 {
			c.add(pp.Key("targetPort"), "targetPort on a Sidecar port is rejected by istiod's validation: it has no effect; remove it")
		}
		c.sidecarPort(port, pp)
		c.port(int64(port.GetNumber()), pp.Key("number"))
		if b := in.GetBind(); b != "" && !isIP(b) {
			c.addf(at.Key("bind"), "bind %q is rejected by istiod's validation: use an IP", b)
		}
		if ports[port.GetNumber()] {
			c.addf(pp.Key("number"), "ingress port %d is listed twice: istiod's validation rejects it", port.GetNumber())
		}
		ports[port.GetNumber()] = true
		c.defaultEndpoint(in.GetDefaultEndpoint(), at.Key("defaultEndpoint"))
		if tls := in.GetTls(); tls != nil {
			tp := at.Key("tls")
			for _, f := range []struct {
				name string
				set  bool
			}{{"subjectAltNames", len(tls.GetSubjectAltNames()) > 0}, {"httpsRedirect", tls.GetHttpsRedirect()}, {"credentialName", tls.GetCredentialName() != ""},
				{"credentialNames", len(tls.GetCredentialNames()) > 0}, {"tlsCertificates", len(tls.GetTlsCertificates()) > 0}} {
				if f.set {
					c.addf(tp.Key(f.name), "%s in Sidecar ingress tls is rejected by istiod's validation: it is not supported there", f.name)
				}
			}
			if m := tls.GetMode(); m == networking.ServerTLSSettings_ISTIO_MUTUAL || m == networking.ServerTLSSettings_AUTO_PASSTHROUGH {
				c.addf(tp.Key("mode"), "tls mode %s in Sidecar ingress is rejected by istiod's validation", m)
			}
			if pr := protocol.Parse(port.GetProtocol()); pr != protocol.HTTPS && pr != protocol.TLS {
				c.addf(tp, "tls on a Sidecar ingress port of protocol %q is rejected by istiod's validation: use HTTPS or TLS", port.GetProtocol())
			}
			c.serverTLS(tls, tp)
		}
		cp := in.GetConnectionPool()
		c.connectionPool(cp, at.Key("connectionPool"))
		if cp.GetHttp() != nil && !protocol.Parse(port.GetProtocol()).IsHTTP() {
			c.warnf(at.Key("connectionPool").Key("http"), "HTTP pool settings on port %d of protocol %q: istiod warns, as only the TCP settings apply to a non-HTTP port", port.GetNumber(), port.GetProtocol())
		}
	}
	c.connectionPool(sc.GetInboundConnectionPool(), spec.Key("inboundConnectionPool"))
	c.egress(sc.GetEgress(), spec.Key("egress"))
	if tp := sc.GetOutboundTrafficPolicy(); tp != nil {
		tpp := spec.Key("outboundTrafficPolicy")
		// Mode 2 is the mesh config's ALLOW_ANY_DYNAMIC_DNS, which the
		// Sidecar's enum does not name.
		if tp.GetMode() == 2 {
			c.add(tpp.Key("mode"), "outboundTrafficPolicy mode ALLOW_ANY_DYNAMIC_DNS is rejected by istiod's validation in a Sidecar: it is a mesh config setting")
		} else if ep := tp.GetEgressProxy(); ep != nil {
			if tp.GetMode() != networking.OutboundTrafficPolicy_ALLOW_ANY {
				c.add(tpp.Key("egressProxy"), "egressProxy without mode ALLOW_ANY is rejected by istiod's validation")
				return
			}
			if msg := fqdnProblem(ep.GetHost()); msg != "" {
				c.addf(tpp.Key("egressProxy").Key("host"), "egressProxy host %q is rejected by istiod's validation: %s", ep.GetHost(), msg)
			}
			if ep.GetPort() == nil {
				c.add(tpp.Key("egressProxy"), "egressProxy without port is rejected by istiod's validation")
			} else {
				c.destination(ep, tpp, "egressProxy")
			}
		}
	}
}

// sidecarPort: the name and protocol of a Sidecar listener port.
func (c *istioChecks) sidecarPort(port *networking.SidecarPort, p model.Path) {
	if port.GetName() != "" {
		c.portName(port.GetName(), p.Key("name"))
	}
	c.protocolName(port.GetProtocol(), p.Key("protocol"))
}

// defaultEndpoint: 127.0.0.1, 0.0.0.0, [::1] or [::] with a port, or a
// unix socket.
func (c *istioChecks) defaultEndpoint(ep string, p model.Path) {
	if ep == "" {
		return
	}
	if addr, ok := strings.CutPrefix(ep, "unix://"); ok {
		c.unixAddress(addr, p)
		return
	}
	h, port, err := net.SplitHostPort(ep)
	if err != nil {
		c.addf(p, "defaultEndpoint %q is rejected by istiod's validation: write HOST:PORT or unix://PATH", ep)
		return
	}
	if h != "" && h != "127.0.0.1" && h != "0.0.0.0" && h != "::1" && h != "::" {
		c.addf(p, "defaultEndpoint %q is rejected by istiod's validation: the host must be 127.0.0.1, 0.0.0.0, [::1] or [::]", ep)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		c.addf(p, "defaultEndpoint %q is rejected by istiod's validation: port %q is not a number", ep, port)
		return
	}
	c.port(int64(n), p)
}

// egress: Sidecar egress listeners. One listener may lack a port, and it
// must be the last; ports and unix sockets are unique; hosts are
// namespace/host, and repeats are warned about.
func (c *istioChecks) egress(listeners []*networking.IstioEgressListener, p model.Path) {
	ports := map[uint32]bool{}
	sockets := map[string]bool{}
	catchAll := false
	for i, e := range listeners {
		at := p.Index(i)
		if port := e.GetPort(); port == nil {
			switch {
			case catchAll:
				c.add(at, "a second egress listener without port is rejected by istiod's validation: only one may catch all ports")
				continue
			case i == len(listeners)-1:
				catchAll = true
			default:
				c.add(at, "an egress listener without port that is not the last is rejected by istiod's validation: move it last")
			}
		} else {
			pp := at.Key("port")
			//lint:ignore SA1019 istiod rejects this deprecated field, so meshc reads it
			if port.GetTargetPort() > 0 {
				c.add(pp.Key("targetPort"), "targetPort on a Sidecar port is rejected by istiod's validation: it has no effect; remove it")
			}
			c.sidecarPort(port, pp)
			bind := e.GetBind()
			if port.GetNumber() == 0 {
				if addr, ok := strings.CutPrefix(bind, "unix://"); ok {
					c.unixAddress(addr, at.Key("bind"))
				} else {
					c.add(pp.Key("number"), "an egress port 0 without a unix:// bind is rejected by istiod's validation: port 0 is for unix sockets")
				}
				if m := e.GetCaptureMode(); m != networking.CaptureMode_DEFAULT && m != networking.CaptureMode_NONE {
					c.addf(at.Key("captureMode"), "captureMode %s on a unix socket listener is rejected by istiod's validation: use DEFAULT or NONE", m)
				}
				if sockets[bind] {
					c.addf(at.Key("bind"), "unix socket %q is used by two egress listeners: istiod's validation rejects it", bind)
				}
				sockets[bind] = true
			} else {
				c.port(int64(port.GetNumber()), pp.Key("number"))
				if bind != "" && !isIP(bind) {
					c.addf(at.Key("bind"), "bind %q is rejected by istiod's validation: use an IP", bind)
				}
				if ports[port.GetNumber()] {
					c.addf(pp.Key("number"), "egress port %d is listed twice: istiod's validation rejects it", port.GetNumber())
				}
				ports[port.GetNumber()] = true
			}
		}
		if len(e.GetHosts()) == 0 {
			c.add(at, "an egress listener without hosts is rejected by istiod's validation: add hosts (\"*/*\" for all)")
			continue
		}
		byNS := map[string]map[string]bool{}
		for j, h := range e.GetHosts() {
			hp := at.Key("hosts").Index(j)
			if ns, name, ok := strings.Cut(h, "/"); ok && !strings.HasPrefix(ns, "~") {
				if ns == "." {
					ns = c.ns
				}
				if byNS[ns] == nil {
					byNS[ns] = map[string]bool{}
				}
				if name != "*" && (byNS[ns][name] || byNS[ns]["*"]) || name == "*" && len(byNS[ns]) > 0 {
					c.warnf(hp, "egress host %q repeats or is covered by an earlier host of this listener: istiod warns; remove it", h)
				}
				byNS[ns][name] = true
			}
			c.nsHost(h, false, hp)
		}
		if byNS["*"]["*"] && len(byNS) > 1 {
			c.warnf(at.Key("hosts"), "egress hosts list \"*/*\", which selects everything, beside other hosts: istiod warns; keep \"*/*\" alone")
		}
	}
}
