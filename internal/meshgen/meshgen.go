// Package meshgen generates large synthetic service meshes — Kubernetes and
// Istio manifests — for benchmarks. The output is deterministic: the same
// Options always give byte-identical files, so meshes are made on demand and
// never committed.
//
// A mesh has namespaces ns-001, ns-002, … (each labelled
// istio-injection: enabled) plus istio-system. Every namespace holds services
// svc-01, svc-02, …, each with a Service, one Deployment per version, a
// DestinationRule with one subset per version and, when the service has more
// than one version, a VirtualService splitting traffic between them. Every
// 10th service also sends 5% of its traffic to the same service in the next
// namespace, and every Nth namespace has a namespace-default Sidecar.
//
// "Every Nth" counts from one: with the defaults svc-05, svc-10, svc-15 and
// svc-20 have a second (grpc) port, svc-03, svc-06, … a connection-pool
// traffic policy, svc-10 and svc-20 cross-namespace routes, and ns-004,
// ns-008, … a Sidecar.
package meshgen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Defaults for zero Options fields.
const (
	defaultNamespaces      = 100
	defaultServicesPerNS   = 20
	defaultSidecarEveryNth = 4
	defaultSeed            = 1

	// maxVersionsPerSvc caps VersionsPerSvc so that every canary version
	// still gets a non-zero route weight.
	maxVersionsPerSvc = 50
)

// Options size a generated mesh. Zero values take the defaults shown.
type Options struct {
	// Namespaces is the number of application namespaces; default 100.
	// Negative values are treated as zero.
	Namespaces int
	// ServicesPerNS is the number of services in each namespace; default 20.
	// Negative values are treated as zero.
	ServicesPerNS int
	// VersionsPerSvc is the number of workloads (Deployments v1, v2, …) per
	// service, at most 50. The default (0) alternates: odd
	// services (svc-01, svc-03, …) have v1, even ones v1 and v2, so 100×20
	// gives 3,000 workloads.
	VersionsPerSvc int
	// SidecarEveryNth puts a namespace-default Sidecar (egress "./*",
	// "istio-system/*" and, when the namespace routes there, the next
	// namespace) in every Nth namespace; default 4; negative means none.
	SidecarEveryNth int
	// Seed drives the few random choices (replica counts, image tags);
	// default 1.
	Seed int64
	// Ingress adds an ingress gateway routing <svc>.<ns>.example.com to
	// every service: IngressIstio as an Istio Gateway and a
	// VirtualService per service, IngressGatewayAPI as a Gateway API
	// Gateway and an HTTPRoute per service (the same routes); none by
	// default.
	Ingress string
	// VersionServices writes a Service per version (svc-NN-vK, selecting
	// app and version) of every routed service, and the VirtualServices
	// route to those Services instead of to subsets: the mesh HTTPRoutes
	// writes, with its routes as VirtualServices, since a Gateway API
	// backend is a Service and cannot name a subset.
	VersionServices bool
	// HTTPRoutes writes the routes of VersionServices as Gateway API mesh
	// HTTPRoutes (parent the Service) instead of VirtualServices; the
	// namespace a cross-namespace route points into grants the previous
	// namespace's HTTPRoutes its Services.
	HTTPRoutes bool
}

// The ingress kinds of Options.Ingress.
const (
	IngressIstio      = "istio"
	IngressGatewayAPI = "gatewayapi"
)

// File is one generated manifest file.
type File struct {
	Name string // relative slash path, e.g. "ns-007/services.yaml"
	Data []byte
}

// Generate returns the manifests of a synthetic mesh, sorted by Name.
func Generate(opts Options) []File {
	files, _ := generate(opts)
	return files
}

// Write writes Generate(opts) under dir (creating subdirectories, 0o644 files,
// 0o755 dirs) and returns the number of files and Kubernetes objects written.
// It never overwrites: a file that exists already is an error.
func Write(dir string, opts Options) (files, objects int, err error) {
	fs, objs := generate(opts)
	files, err = WriteFiles(dir, fs)
	if err != nil {
		return files, 0, err
	}
	return files, objs, nil
}

// WriteFiles writes files under dir as Write does and returns how many.
func WriteFiles(dir string, fs []File) (int, error) {
	made := map[string]bool{}
	for i, f := range fs {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if d := filepath.Dir(p); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return i, err
			}
			made[d] = true
		}
		if err := writeNew(p, f.Data); err != nil {
			return i, err
		}
	}
	return len(fs), nil
}

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("%w (gen writes only new files)", err)
	}
	_, werr := f.Write(data)
	return errors.Join(werr, f.Close())
}

// config is Options with defaults applied.
type config struct {
	namespaces, services, versions, sidecarNth int
	seed                                       uint64
	nsWidth, svcWidth                          int
	versionServices, httpRoutes                bool
}

func resolve(o Options) config {
	c := config{
		namespaces: o.Namespaces,
		services:   o.ServicesPerNS,
		versions:   o.VersionsPerSvc,
		sidecarNth: o.SidecarEveryNth,
		seed:       uint64(o.Seed),
		httpRoutes: o.HTTPRoutes,
		// An HTTPRoute names a Service per version where a
		// VirtualService may name a subset.
		versionServices: o.VersionServices || o.HTTPRoutes,
	}
	if c.namespaces == 0 {
		c.namespaces = defaultNamespaces
	}
	c.namespaces = max(c.namespaces, 0)
	if c.services == 0 {
		c.services = defaultServicesPerNS
	}
	c.services = max(c.services, 0)
	c.versions = min(max(c.versions, 0), maxVersionsPerSvc)
	if c.sidecarNth == 0 {
		c.sidecarNth = defaultSidecarEveryNth
	}
	if o.Seed == 0 {
		c.seed = defaultSeed
	}
	c.nsWidth = max(3, len(strconv.Itoa(c.namespaces)))
	c.svcWidth = max(2, len(strconv.Itoa(c.services)))
	return c
}

// versionsOf returns the number of versions of service s (1-based).
func (c *config) versionsOf(s int) int {
	if c.versions > 0 {
		return c.versions
	}
	if s%2 == 0 {
		return 2
	}
	return 1
}

func (c *config) nsName(n int) string  { return pad("ns-", n, c.nsWidth) }
func (c *config) svcName(s int) string { return pad("svc-", s, c.svcWidth) }

func pad(prefix string, n, width int) string {
	d := strconv.Itoa(n)
	if len(d) < width {
		d = strings.Repeat("0", width-len(d)) + d
	}
	return prefix + d
}

// rand returns a pseudo-random number for the given coordinates
// (splitmix64 of the seed mixed with them), so that each choice depends only
// on the seed and the object it is made for, not on generation order.
func (c *config) rand(ns, svc, ver int) uint64 {
	x := c.seed
	for _, v := range [...]int{ns, svc, ver} {
		x ^= uint64(v)
		x += 0x9e3779b97f4a7c15
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
		x = (x ^ (x >> 27)) * 0x94d049bb133111eb
		x ^= x >> 31
	}
	return x
}

// doc writes one YAML document to b, preceded by a separator unless it is
// the first in the file.
type doc struct {
	b bytes.Buffer
	n int
}

func (d *doc) start() *bytes.Buffer {
	if d.n > 0 {
		d.b.WriteString("---\n")
	}
	d.n++
	return &d.b
}

func (d *doc) bytes() []byte { return d.b.Bytes() }

func generate(o Options) ([]File, int) {
	c := resolve(o)
	files := make([]File, 0, 1+6*c.namespaces)
	objects := 0

	var sys doc
	writeNamespace(sys.start(), "istio-system", false)
	files = append(files, File{Name: "istio-system/namespace.yaml", Data: sys.bytes()})
	objects += sys.n
	if o.Ingress != "" {
		var ing doc
		writeIngress(&ing, o.Ingress)
		files = append(files, File{Name: "ingress/gateway.yaml", Data: ing.bytes()})
		objects += ing.n
	}

	svcNames := make([]string, c.services+1)
	for s := 1; s <= c.services; s++ {
		svcNames[s] = c.svcName(s)
	}

	for n := 1; n <= c.namespaces; n++ {
		ns := c.nsName(n)
		next := c.nsName(n%c.namespaces + 1)
		prev := c.nsName((n+c.namespaces-2)%c.namespaces + 1)
		var nsDoc, svcs, deps, drs, vss, hrs, sc, routes doc
		crossNS := false

		writeNamespace(nsDoc.start(), ns, true)
		for s := 1; s <= c.services; s++ {
			name := svcNames[s]
			versions := c.versionsOf(s)
			grpc := s%5 == 0
			cross := s%10 == 0
			crossNS = crossNS || cross

			writeService(svcs.start(), ns, name, grpc)
			if o.Ingress != "" {
				writeIngressRoute(routes.start(), o.Ingress, ns, name)
			}
			for v := 1; v <= versions; v++ {
				r := c.rand(n, s, v)
				writeDeployment(deps.start(), ns, name, v, grpc, int(r%3)+1, int((r>>8)%10))
			}
			writeDestinationRule(drs.start(), ns, name, versions, s%3 == 0)
			if versions == 1 && !cross {
				continue
			}
			if c.versionServices {
				for v := 1; v <= versions; v++ {
					writeVersionService(svcs.start(), ns, name, v, grpc)
				}
			}
			if c.httpRoutes {
				remote := ""
				if cross {
					remote = next
				}
				writeHTTPRoute(hrs.start(), ns, name, versions, remote)
				continue
			}
			remote := ""
			if cross {
				remote = name + "." + next + ".svc.cluster.local"
			}
			writeVirtualService(vss.start(), ns, name, versions, remote, c.versionServices)
		}
		// The previous namespace's routes send some traffic here.
		if c.httpRoutes && c.services >= 10 && prev != ns {
			writeReferenceGrant(hrs.start(), ns, prev)
		}
		if c.sidecarNth > 0 && n%c.sidecarNth == 0 {
			egress := []string{"./*", "istio-system/*"}
			if crossNS && next != ns {
				egress = append(egress, next+"/*")
			}
			writeSidecar(sc.start(), ns, egress)
		}

		for _, f := range [...]struct {
			name string
			d    *doc
		}{
			{"namespace.yaml", &nsDoc},
			{"services.yaml", &svcs},
			{"deployments.yaml", &deps},
			{"destination-rules.yaml", &drs},
			{"virtual-services.yaml", &vss},
			{"http-routes.yaml", &hrs},
			{"sidecar.yaml", &sc},
			{"ingress-routes.yaml", &routes},
		} {
			if f.d.n == 0 {
				continue
			}
			files = append(files, File{Name: ns + "/" + f.name, Data: f.d.bytes()})
			objects += f.d.n
		}
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	return files, objects
}

func writeNamespace(b *bytes.Buffer, name string, inject bool) {
	b.WriteString("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ")
	b.WriteString(name)
	b.WriteByte('\n')
	if inject {
		b.WriteString("  labels:\n    istio-injection: enabled\n")
	}
}

func writeService(b *bytes.Buffer, ns, name string, grpc bool) {
	fmt.Fprintf(b, `apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  namespace: %[2]s
  labels:
    app: %[1]s
    service: %[1]s
spec:
  selector:
    app: %[1]s
  ports:
    - name: http
      port: 8080
      targetPort: 8080
`, name, ns)
	if grpc {
		b.WriteString("    - name: grpc\n      port: 9090\n      targetPort: 9090\n")
	}
}

func writeDeployment(b *bytes.Buffer, ns, svc string, v int, grpc bool, replicas, patch int) {
	fmt.Fprintf(b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s-v%[3]d
  namespace: %[2]s
  labels:
    app: %[1]s
    version: v%[3]d
spec:
  replicas: %[4]d
  selector:
    matchLabels:
      app: %[1]s
      version: v%[3]d
  template:
    metadata:
      labels:
        app: %[1]s
        version: v%[3]d
    spec:
      containers:
        - name: %[1]s
          image: registry.example.com/meshgen/%[1]s:%[3]d.0.%[5]d
          ports:
            - name: http
              containerPort: 8080
`, svc, ns, v, replicas, patch)
	if grpc {
		b.WriteString("            - name: grpc\n              containerPort: 9090\n")
	}
}

func writeDestinationRule(b *bytes.Buffer, ns, svc string, versions int, pool bool) {
	fmt.Fprintf(b, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  host: %[1]s
`, svc, ns)
	if pool {
		b.WriteString("  trafficPolicy:\n    connectionPool:\n      tcp:\n        maxConnections: 100\n")
	}
	b.WriteString("  subsets:\n")
	for v := 1; v <= versions; v++ {
		fmt.Fprintf(b, "    - name: v%[1]d\n      labels:\n        version: v%[1]d\n", v)
	}
}

// routeWeights are the weights of versions v1, v2, … of a service: 10% to
// each version after v1 (less when there are more than five, 50% in all),
// the rest to v1 less 5% when some goes to another namespace.
func routeWeights(versions int, remote bool) []int {
	canaries := versions - 1
	per, extra := 10, 0
	if canaries*10 > 50 {
		per, extra = 50/canaries, 50%canaries
	}
	ws := []int{100 - per*canaries - extra}
	if remote {
		ws[0] -= 5
	}
	for v := 2; v <= versions; v++ {
		w := per
		if v-2 < extra {
			w++
		}
		ws = append(ws, w)
	}
	return ws
}

// writeVirtualService routes svc's traffic: 10% to each version after v1
// (less when there are more than five, 50% in all), 5% to remote when it is
// not empty, and the rest to v1. A version is a subset of svc, or with
// versionServices its own Service.
func writeVirtualService(b *bytes.Buffer, ns, svc string, versions int, remote string, versionServices bool) {
	fmt.Fprintf(b, `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  hosts:
    - %[1]s
  http:
    - route:
`, svc, ns)
	for v, w := range routeWeights(versions, remote != "") {
		if versionServices {
			fmt.Fprintf(b, "        - destination:\n            host: %s-v%d\n          weight: %d\n", svc, v+1, w)
			continue
		}
		fmt.Fprintf(b, "        - destination:\n            host: %s\n            subset: v%d\n          weight: %d\n", svc, v+1, w)
	}
	if remote != "" {
		fmt.Fprintf(b, "        - destination:\n            host: %s\n          weight: 5\n", remote)
	}
	b.WriteString("      timeout: \"5s\"\n")
}

// writeVersionService writes svc-NN-vK, the Service of one version, which
// an HTTPRoute names where a VirtualService names a subset.
func writeVersionService(b *bytes.Buffer, ns, svc string, v int, grpc bool) {
	fmt.Fprintf(b, `apiVersion: v1
kind: Service
metadata:
  name: %[1]s-v%[3]d
  namespace: %[2]s
  labels:
    app: %[1]s
    service: %[1]s-v%[3]d
spec:
  selector:
    app: %[1]s
    version: v%[3]d
  ports:
    - name: http
      port: 8080
      targetPort: 8080
`, svc, ns, v)
	if grpc {
		b.WriteString("    - name: grpc\n      port: 9090\n      targetPort: 9090\n")
	}
}

// writeHTTPRoute is writeVirtualService as a mesh HTTPRoute: the same
// weights, to the version Services, and 5% to svc in namespace remote
// when it is not empty.
func writeHTTPRoute(b *bytes.Buffer, ns, svc string, versions int, remote string) {
	fmt.Fprintf(b, `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  parentRefs:
    - group: ""
      kind: Service
      name: %[1]s
  rules:
    - backendRefs:
`, svc, ns)
	ws := routeWeights(versions, remote != "")
	for v, w := range ws {
		fmt.Fprintf(b, "        - name: %s-v%d\n          port: 8080\n          weight: %d\n", svc, v+1, w)
	}
	if remote != "" {
		fmt.Fprintf(b, "        - name: %s\n          namespace: %s\n          port: 8080\n          weight: 5\n", svc, remote)
	}
	b.WriteString("      timeouts:\n        request: 5s\n")
}

// writeReferenceGrant lets HTTPRoutes of namespace from name Services of ns.
func writeReferenceGrant(b *bytes.Buffer, ns, from string) {
	fmt.Fprintf(b, `apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata:
  name: from-%[2]s
  namespace: %[1]s
spec:
  from:
    - group: gateway.networking.k8s.io
      kind: HTTPRoute
      namespace: %[2]s
  to:
    - group: ""
      kind: Service
`, ns, from)
}

func writeSidecar(b *bytes.Buffer, ns string, egress []string) {
	fmt.Fprintf(b, `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: default
  namespace: %s
spec:
  egress:
    - hosts:
`, ns)
	for _, h := range egress {
		fmt.Fprintf(b, "        - %q\n", h)
	}
}

// writeIngress writes the ingress namespace and its gateway: a Gateway
// API Gateway istiod deploys, or an Istio Gateway with the Deployment and
// Service of the gateway it selects.
func writeIngress(d *doc, kind string) {
	writeNamespace(d.start(), "ingress", false)
	if kind == IngressGatewayAPI {
		d.start().WriteString(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: public
  namespace: ingress
spec:
  gatewayClassName: istio
  listeners:
    - name: web
      hostname: "*.example.com"
      port: 80
      protocol: HTTP
      allowedRoutes:
        namespaces:
          from: All
`)
		return
	}
	d.start().WriteString(`apiVersion: networking.istio.io/v1
kind: Gateway
metadata:
  name: public
  namespace: ingress
spec:
  selector:
    istio: ingress
  servers:
    - port:
        number: 80
        name: web
        protocol: HTTP
      hosts:
        - "*/*.example.com"
`)
	d.start().WriteString(`apiVersion: v1
kind: Service
metadata:
  name: public-istio
  namespace: ingress
spec:
  selector:
    istio: ingress
  ports:
    - name: web
      port: 80
`)
	d.start().WriteString(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: public-istio
  namespace: ingress
spec:
  selector:
    matchLabels:
      istio: ingress
  template:
    metadata:
      labels:
        istio: ingress
        sidecar.istio.io/inject: "true"
      annotations:
        inject.istio.io/templates: gateway
    spec:
      containers:
        - name: istio-proxy
          image: auto
`)
}

// writeIngressRoute routes <svc>.<ns>.example.com at the ingress gateway to
// the service.
func writeIngressRoute(b *bytes.Buffer, kind, ns, svc string) {
	if kind == IngressGatewayAPI {
		fmt.Fprintf(b, `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: %[1]s-ingress
  namespace: %[2]s
spec:
  parentRefs:
    - name: public
      namespace: ingress
  hostnames:
    - %[1]s.%[2]s.example.com
  rules:
    - backendRefs:
        - name: %[1]s
          port: 8080
`, svc, ns)
		return
	}
	fmt.Fprintf(b, `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: %[1]s-ingress
  namespace: %[2]s
spec:
  hosts:
    - %[1]s.%[2]s.example.com
  gateways:
    - ingress/public
  http:
    - route:
        - destination:
            host: %[1]s
            port:
              number: 8080
`, svc, ns)
}
