package meshgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Random returns a small mesh whose shape the seed decides, for comparing
// meshc with istiod on inputs nobody hand-picked: 2 to 5 namespaces of 2
// to 4 services with mixed protocols and one or two versions, Pods (so
// both sides see the same endpoints), ServiceEntries (DNS, static, none),
// Sidecars, DestinationRules with TLS, pools, load balancers, outlier
// detection and subsets, VirtualServices with matches, splits, faults,
// retries, timeouts and mirrors, PeerAuthentications, and an ingress
// gateway with plain, TLS and passthrough servers, some bound to its
// address. The same seed gives
// the same files.
func Random(seed int64) []File {
	return RandomWith(seed, RandomOptions{})
}

// RandomOptions add to Random's mesh; the zero value adds nothing, and
// what they add never changes the files Random writes without them.
type RandomOptions struct {
	// GatewayAPI adds Gateway API objects (see gatewayAPI).
	GatewayAPI bool
}

// RandomWith is Random with options.
func RandomWith(seed int64, o RandomOptions) []File {
	r := rand.New(rand.NewPCG(uint64(seed), 0x6d657368))
	g := &randomMesh{r: r}
	files := g.generate()
	if o.GatewayAPI {
		files = append(files, g.gatewayAPI(seed)...)
	}
	return files
}

type randomMesh struct {
	r     *rand.Rand
	ns    []string
	svcs  []randomService
	files []File
	ip    int
}

type randomService struct {
	ns, name string
	ports    []randomPort
	versions int
	routed   bool // a VirtualService routes its host
}

type randomPort struct {
	name   string
	number int
	http   bool
}

func (g *randomMesh) pick(options ...string) string { return options[g.r.IntN(len(options))] }
func (g *randomMesh) chance(p float64) bool         { return g.r.Float64() < p }

func (g *randomMesh) generate() []File {
	n := 2 + g.r.IntN(4)
	for i := range n {
		g.ns = append(g.ns, fmt.Sprintf("r%d", i+1))
	}
	for _, ns := range g.ns {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {istio-injection: enabled}}\n", ns)
		for i := range 2 + g.r.IntN(3) {
			g.service(&b, ns, fmt.Sprintf("s%d", i+1))
		}
		g.add(ns+"/workloads.yaml", b.String())
	}
	var cfg strings.Builder
	for i, s := range g.svcs {
		if g.chance(0.6) {
			g.destinationRule(&cfg, s)
		}
		if g.chance(0.5) && s.ports[0].http {
			g.virtualService(&cfg, s)
			g.svcs[i].routed = true
		}
	}
	g.serviceEntries(&cfg)
	for _, ns := range g.ns {
		if g.chance(0.4) {
			g.sidecar(&cfg, ns)
		}
		if g.chance(0.3) {
			fmt.Fprintf(&cfg, "---\napiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: %s}\nspec: {mtls: {mode: %s}}\n", ns, g.pick("STRICT", "PERMISSIVE", "DISABLE"))
		}
	}
	if g.chance(0.5) {
		fmt.Fprintf(&cfg, "---\napiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata: {name: default, namespace: istio-system}\nspec: {mtls: {mode: %s}}\n", g.pick("STRICT", "PERMISSIVE"))
	}
	g.gateway(&cfg)
	g.add("config.yaml", strings.TrimPrefix(cfg.String(), "---\n"))
	return g.files
}

// add keeps a file, every object stamped with one creation time, as one
// kubectl apply of the whole mesh leaves them: ties go to names in meshc
// and istiod alike, whatever time each side would give an object without
// one.
func (g *randomMesh) add(name, data string) {
	data = strings.ReplaceAll(data, "metadata: {name: ", "metadata: {creationTimestamp: \""+appliedAt+"\", name: ")
	g.files = append(g.files, File{Name: name, Data: []byte(data)})
}

const appliedAt = "2026-01-01T00:00:00Z"

// service writes a Service and its Pods.
func (g *randomMesh) service(b *strings.Builder, ns, name string) {
	s := randomService{ns: ns, name: name, versions: 1 + g.r.IntN(2)}
	kinds := []string{"http", "http", "http2", "grpc", "tcp", "tls", "mongo", "https"}
	used := map[int]bool{}
	for range 1 + g.r.IntN(2) {
		kind := kinds[g.r.IntN(len(kinds))]
		number := []int{80, 8080, 9080, 5000, 443, 27017, 3306}[g.r.IntN(7)]
		if used[number] {
			continue
		}
		used[number] = true
		s.ports = append(s.ports, randomPort{name: fmt.Sprintf("%s-%d", kind, number), number: number, http: kind == "http" || kind == "http2" || kind == "grpc"})
	}
	var ports, container []string
	for _, p := range s.ports {
		ports = append(ports, fmt.Sprintf("{name: %s, port: %d}", p.name, p.number))
		container = append(container, fmt.Sprintf("{containerPort: %d}", p.number))
	}
	// A cluster IP of its own, as the API server gives one: both sides
	// then name the same listeners.
	fmt.Fprintf(b, "---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec: {clusterIP: 10.96.%d.%d, selector: {app: %s}, ports: [%s]}\n",
		name, ns, len(g.svcs)/256, len(g.svcs)%256+1, name, strings.Join(ports, ", "))
	for v := 1; v <= s.versions; v++ {
		g.ip++
		// As the injector and the API server leave a Pod: the tlsMode
		// label the injector adds, a service account set.
		fmt.Fprintf(b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-v%d, namespace: %s, labels: {app: %s, version: v%d, security.istio.io/tlsMode: istio}}\nspec: {serviceAccountName: %s, containers: [{name: app, image: app, ports: [%s]}]}\nstatus: {podIP: 10.%d.%d.%d}\n",
			name, v, ns, name, v, name, strings.Join(container, ", "), 10+g.ip/65536, g.ip/256%256, g.ip%256)
	}
	g.svcs = append(g.svcs, s)
}

func (g *randomMesh) host(s randomService) string { return s.name + "." + s.ns + ".svc.cluster.local" }

func (g *randomMesh) destinationRule(b *strings.Builder, s randomService) {
	var policy []string
	if g.chance(0.6) {
		switch g.pick("ISTIO_MUTUAL", "DISABLE", "SIMPLE") {
		case "SIMPLE":
			policy = append(policy, "tls: {mode: SIMPLE, sni: "+s.name+".example.com}")
		case "DISABLE":
			policy = append(policy, "tls: {mode: DISABLE}")
		default:
			policy = append(policy, "tls: {mode: ISTIO_MUTUAL}")
		}
	}
	if g.chance(0.4) {
		policy = append(policy, fmt.Sprintf("connectionPool: {tcp: {maxConnections: %d, connectTimeout: %dms}, http: {http1MaxPendingRequests: %d, maxRetries: %d}}",
			10+g.r.IntN(90), 100+g.r.IntN(900), 1+g.r.IntN(50), g.r.IntN(5)))
	}
	if g.chance(0.4) {
		policy = append(policy, g.pick("loadBalancer: {simple: LEAST_REQUEST}", "loadBalancer: {simple: RANDOM}",
			"loadBalancer: {consistentHash: {httpHeaderName: x-user}}", "loadBalancer: {consistentHash: {useSourceIp: true}}"))
	}
	if g.chance(0.3) {
		policy = append(policy, fmt.Sprintf("outlierDetection: {consecutive5xxErrors: %d, interval: %ds, baseEjectionTime: 30s}", 1+g.r.IntN(9), 1+g.r.IntN(30)))
	}
	if g.chance(0.3) {
		policy = append(policy, fmt.Sprintf("portLevelSettings: [{port: {number: %d}, %s}]", s.ports[0].number, g.pick(
			"tls: {mode: DISABLE}", "tls: {mode: ISTIO_MUTUAL}", "loadBalancer: {simple: LEAST_REQUEST}",
			"loadBalancer: {consistentHash: {httpHeaderName: x-port}}", "connectionPool: {tcp: {maxConnections: 7}}")))
	}
	fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata: {name: %s, namespace: %s}\nspec:\n  host: %s\n", s.name, s.ns, g.host(s))
	if len(policy) > 0 {
		fmt.Fprintf(b, "  trafficPolicy: {%s}\n", strings.Join(policy, ", "))
	}
	b.WriteString("  subsets:\n")
	for v := 1; v <= 2; v++ {
		extra := ""
		if g.chance(0.25) {
			extra = ", trafficPolicy: {" + g.pick("tls: {mode: ISTIO_MUTUAL}", "tls: {mode: DISABLE}", "loadBalancer: {simple: ROUND_ROBIN}",
				"connectionPool: {http: {http2MaxRequests: 100}}") + "}"
		}
		fmt.Fprintf(b, "  - {name: v%d, labels: {version: v%d}%s}\n", v, v, extra)
	}
}

func (g *randomMesh) virtualService(b *strings.Builder, s randomService) {
	fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: %s, namespace: %s}\nspec:\n  hosts: [%s]\n  http:\n", s.name, s.ns, s.name)
	for i := range 1 + g.r.IntN(3) {
		var route []string
		if i == 0 && g.chance(0.7) {
			route = append(route, g.pick(
				"match: [{uri: {prefix: /api}}]",
				"match: [{headers: {x-canary: {exact: \"1\"}}}]",
				"match: [{method: {exact: POST}}]",
				"match: [{uri: {exact: /login}}, {uri: {prefix: /static}}]",
				"match: [{queryParams: {debug: {exact: \"1\"}}}]"))
		}
		if g.chance(0.5) {
			route = append(route, "route: [{destination: {host: "+s.name+", subset: v1}, weight: 80}, {destination: {host: "+s.name+", subset: v2}, weight: 20}]")
		} else {
			route = append(route, "route: [{destination: {host: "+s.name+"}}]")
		}
		if g.chance(0.3) {
			route = append(route, g.pick("fault: {delay: {fixedDelay: 2s, percentage: {value: 10}}}", "fault: {abort: {httpStatus: 503, percentage: {value: 5}}}"))
		}
		if g.chance(0.3) {
			route = append(route, fmt.Sprintf("retries: {attempts: %d, perTryTimeout: 2s, retryOn: \"5xx,connect-failure\"}", 1+g.r.IntN(4)))
		}
		if g.chance(0.3) {
			route = append(route, fmt.Sprintf("timeout: %ds", 1+g.r.IntN(10)))
		}
		if g.chance(0.2) {
			other := g.svcs[g.r.IntN(len(g.svcs))]
			route = append(route, "mirror: {host: "+g.host(other)+"}, mirrorPercentage: {value: 50}")
		}
		fmt.Fprintf(b, "  - {%s}\n", strings.Join(route, ", "))
	}
}

func (g *randomMesh) serviceEntries(b *strings.Builder) {
	if g.chance(0.7) {
		fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: external-api, namespace: %s}\nspec: {hosts: [api.example.com], location: MESH_EXTERNAL, resolution: DNS, ports: [{number: 443, name: tls, protocol: TLS}, {number: 80, name: http, protocol: HTTP}]}\n", g.ns[0])
	}
	if g.chance(0.5) {
		fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: db, namespace: %s}\nspec: {hosts: [db.internal], addresses: [192.168.50.10], location: MESH_INTERNAL, resolution: STATIC, ports: [{number: 5432, name: tcp, protocol: TCP}], endpoints: [{address: 192.168.50.11}, {address: 192.168.50.12}]}\n", g.ns[len(g.ns)-1])
	}
	if g.chance(0.3) {
		fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: passthrough, namespace: %s}\nspec: {hosts: [\"*.example.org\"], location: MESH_EXTERNAL, resolution: NONE, ports: [{number: 443, name: https, protocol: HTTPS}]}\n", g.ns[0])
	}
}

func (g *randomMesh) sidecar(b *strings.Builder, ns string) {
	hosts := []string{"./*", "istio-system/*"}
	if other := g.ns[g.r.IntN(len(g.ns))]; other != ns {
		hosts = append(hosts, other+"/*")
	}
	fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: Sidecar\nmetadata: {name: default, namespace: %s}\nspec: {egress: [{hosts: [\"%s\"]}]}\n", ns, strings.Join(hosts, "\", \""))
}

// gateway writes an ingress gateway Pod in istio-system, its Service,
// and a Gateway with servers the seed picks, bound by a VirtualService.
func (g *randomMesh) gateway(b *strings.Builder) {
	if !g.chance(0.6) {
		return
	}
	g.add("istio-system/gateway.yaml", `apiVersion: v1
kind: Namespace
metadata: {name: istio-system}
---
apiVersion: v1
kind: Pod
metadata: {name: ingress, namespace: istio-system, labels: {istio: ingressgateway, sidecar.istio.io/inject: "true", security.istio.io/tlsMode: istio}}
spec: {serviceAccountName: ingress, containers: [{name: istio-proxy, image: proxyv2, ports: [{containerPort: 8080}, {containerPort: 8443}, {containerPort: 15443}]}]}
status: {podIP: 10.99.0.1}
---
apiVersion: v1
kind: Service
metadata: {name: ingress, namespace: istio-system}
spec: {clusterIP: 10.96.200.1, selector: {istio: ingressgateway}, ports: [{name: http, port: 8080}, {name: https, port: 8443}, {name: tls, port: 15443}]}
`)
	servers := []string{"{port: {number: 8080, name: http, protocol: HTTP}, hosts: [\"*\"]}"}
	var passthrough, tcp bool
	if g.chance(0.5) {
		servers = append(servers, "{port: {number: 8443, name: https, protocol: HTTPS}, hosts: [\"*\"], tls: {mode: SIMPLE, credentialName: ingress-cert}}")
	}
	switch g.pick("auto", "passthrough", "mutual", "istio", "none") {
	case "auto":
		servers = append(servers, "{port: {number: 15443, name: tls, protocol: TLS}, hosts: [\"*.local\"], tls: {mode: AUTO_PASSTHROUGH}}")
	case "passthrough":
		servers = append(servers, "{port: {number: 15443, name: tls, protocol: TLS}, hosts: [\"*.example.net\"], tls: {mode: PASSTHROUGH}}")
		passthrough = true
	case "mutual":
		servers = append(servers, "{port: {number: 15443, name: https-mtls, protocol: HTTPS}, hosts: [\"*\"], tls: {mode: MUTUAL, credentialName: ingress-mtls}}")
	case "istio":
		servers = append(servers, "{port: {number: 15443, name: tls-istio, protocol: TLS}, hosts: [\"*\"], tls: {mode: ISTIO_MUTUAL}}")
		tcp = true
	}
	writeIngressGateway(b, "public", servers)
	for _, s := range g.svcs {
		if passthrough && !s.ports[0].http {
			passthrough = false
			fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: %s-passthrough, namespace: %s}\nspec:\n  hosts: [\"%s.example.net\"]\n  gateways: [istio-system/public]\n  tls:\n  - {match: [{sniHosts: [\"%s.example.net\"]}], route: [{destination: {host: %s, port: {number: %d}}}]}\n",
				s.name, s.ns, s.name, s.name, s.name, s.ports[0].number)
		}
		if tcp && !s.ports[0].http {
			tcp = false
			fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: %s-tcp, namespace: %s}\nspec:\n  hosts: [\"*\"]\n  gateways: [istio-system/public]\n  tcp:\n  - {match: [{port: 15443}], route: [{destination: {host: %s, port: {number: %d}}}]}\n",
				s.name, s.ns, s.name, s.ports[0].number)
		}
	}
	for _, s := range g.svcs {
		if s.ports[0].http {
			fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: %s-ingress, namespace: %s}\nspec:\n  hosts: [\"%s.example.com\"]\n  gateways: [istio-system/public]\n  http:\n  - {match: [{uri: {prefix: /}}], route: [{destination: {host: %s, port: {number: %d}}}]}\n",
				s.name, s.ns, s.name, s.name, s.ports[0].number)
			break
		}
	}
	g.boundGateway(b)
}

// writeIngressGateway writes Gateway istio-system/name for the ingress Pod, with
// servers in order.
func writeIngressGateway(b *strings.Builder, name string, servers []string) {
	fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: Gateway\nmetadata: {name: %s, namespace: istio-system}\nspec:\n  selector: {istio: ingressgateway}\n  servers:\n", name)
	for _, s := range servers {
		fmt.Fprintf(b, "  - %s\n", s)
	}
}

// boundGateway sometimes adds a Gateway whose servers bind the ingress
// Pod's address, on ports the public Gateway's unbound servers use: an
// HTTP server, and an HTTPS or a TCP one, each another listener of the
// gateway, with a VirtualService routing its host. It draws last, so the
// rest of the mesh stays as the seed made it without.
func (g *randomMesh) boundGateway(b *strings.Builder) {
	if !g.chance(0.35) {
		return
	}
	servers := []string{"{port: {number: 8080, name: http-bound, protocol: HTTP}, bind: 10.99.0.1, hosts: [bound.example.com]}"}
	var tcp bool
	switch g.pick("http", "https", "tcp") {
	case "https":
		servers = append(servers, "{port: {number: 8443, name: https-bound, protocol: HTTPS}, bind: 10.99.0.1, hosts: [bound.example.com], tls: {mode: SIMPLE, credentialName: ingress-cert}}")
	case "tcp":
		servers = append(servers, "{port: {number: 15443, name: tcp-bound, protocol: TCP}, bind: 10.99.0.1, hosts: [\"*\"]}")
		tcp = true
	}
	writeIngressGateway(b, "bound", servers)
	var http, opaque *randomService
	for i := range g.svcs {
		s := &g.svcs[i]
		if s.ports[0].http && http == nil {
			http = s
		}
		if !s.ports[0].http && opaque == nil {
			opaque = s
		}
	}
	if http != nil {
		fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: bound, namespace: %s}\nspec:\n  hosts: [bound.example.com]\n  gateways: [istio-system/bound]\n  http:\n  - {route: [{destination: {host: %s, port: {number: %d}}}]}\n",
			http.ns, http.name, http.ports[0].number)
	}
	if tcp && opaque != nil {
		fmt.Fprintf(b, "---\napiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: bound-tcp, namespace: %s}\nspec:\n  hosts: [\"*\"]\n  gateways: [istio-system/bound]\n  tcp:\n  - {match: [{port: 15443}], route: [{destination: {host: %s, port: {number: %d}}}]}\n",
			opaque.ns, opaque.name, opaque.ports[0].number)
	}
}
