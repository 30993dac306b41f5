package resolve

import (
	"slices"
	"testing"
)

// TestAllocatedEntryAddresses: under DNS capture a ServiceEntry host
// without addresses takes those istiod's allocator wrote to the status,
// else the next free pair of 240.240.0.0/16 and 2001:2::/48 in
// (namespace, name) order, skipping those statuses and specs name;
// resolution NONE, the
// opt-out label, addresses of its own and a wildcard host outside
// DYNAMIC_DNS get none. Without capture no entry gets any.
func TestAllocatedEntryAddresses(t *testing.T) {
	se := func(name, ns, rest string) string {
		return "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: " + name + ", namespace: " + ns + "}\n" + rest
	}
	tcp := "ports: [{number: 9000, name: tcp, protocol: TCP}]"
	docs := []string{
		se("b", "app", "spec: {hosts: [b.example.com], resolution: DNS, "+tcp+"}"),
		se("a", "app", "spec: {hosts: [a.example.com, a2.example.com], resolution: DNS, ports: [{number: 80, name: http}]}"),
		se("status", "zz", "spec: {hosts: [s.example.com], resolution: DNS, "+tcp+"}\nstatus: {addresses: [{host: s.example.com, value: 240.240.0.1}, {host: s.example.com, value: \"2001:2::9\"}, {host: other.io, value: 240.240.0.5}]}"),
		se("v4only", "zz", "spec: {hosts: [v4.example.com], resolution: STATIC, endpoints: [{address: 192.0.2.1}], "+tcp+"}\nstatus: {addresses: [{host: v4.example.com, value: 240.240.0.3}, {host: v4.example.com, value: bogus}]}"),
		se("none", "app", "spec: {hosts: [none.example.com], resolution: NONE, "+tcp+"}"),
		se("own", "app", "spec: {hosts: [own.example.com], addresses: [240.240.0.2], resolution: DNS, "+tcp+"}"),
		"apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata: {name: optout, namespace: app, labels: {networking.istio.io/enable-autoallocate-ip: \"false\"}}\nspec: {hosts: [optout.example.com], resolution: DNS, " + tcp + "}",
		se("wild", "app", "spec: {hosts: [\"*.wild.io\"], resolution: DYNAMIC_DNS, ports: [{number: 443, name: tls, protocol: TLS}]}"),
	}
	want := map[string][]string{
		"a.example.com":      {"240.240.0.4", "2001:2::1"},
		"a2.example.com":     {"240.240.0.6", "2001:2::2"},
		"b.example.com":      {"240.240.0.7", "2001:2::3"},
		"*.wild.io":          {"240.240.0.8", "2001:2::4"},
		"s.example.com":      {"240.240.0.1", "2001:2::9"},
		"v4.example.com":     {"240.240.0.3"},
		"none.example.com":   nil,
		"own.example.com":    {"240.240.0.2"},
		"optout.example.com": nil,
	}
	capture := "defaultConfig:\n  proxyMetadata:\n    ISTIO_META_DNS_CAPTURE: \"true\""
	for _, tc := range []struct {
		name, mesh string
		capture    bool
	}{{"capture", capture, true}, {"no capture", "", false}} {
		t.Run(tc.name, func(t *testing.T) {
			m := mesh(t, tc.mesh, docs...)
			for _, s := range m.Services {
				w := want[string(s.Host)]
				if !tc.capture && s.Host != "own.example.com" {
					w = nil
				}
				if !slices.Equal(s.Addresses, w) {
					t.Errorf("%s: addresses %v, want %v", s.Host, s.Addresses, w)
				}
				byMeshc := tc.capture && s.Host != "s.example.com" && s.Host != "v4.example.com" && w != nil && s.Host != "own.example.com"
				if s.AllocatedByMeshc != byMeshc {
					t.Errorf("%s: AllocatedByMeshc %v, want %v", s.Host, s.AllocatedByMeshc, byMeshc)
				}
			}
		})
	}
}

// TestCapturesDNS: a pod's proxy.istio.io/config sets ISTIO_META_DNS_CAPTURE
// over the mesh's, parsed as a boolean; without the key, or with an
// annotation that is not YAML, the mesh's holds.
func TestCapturesDNS(t *testing.T) {
	for _, tc := range []struct {
		annotation string
		mesh, want bool
	}{
		{"", false, false},
		{"", true, true},
		{"proxyMetadata: {ISTIO_META_DNS_CAPTURE: \"true\"}", false, true},
		{"proxyMetadata: {ISTIO_META_DNS_CAPTURE: \"1\"}", false, true},
		{"proxyMetadata: {ISTIO_META_DNS_CAPTURE: \"false\"}", true, false},
		{"proxyMetadata: {OTHER: x}", true, true},
		{"concurrency: 2", false, false},
		{"proxyMetadata: [", true, true},
	} {
		a := map[string]string{}
		if tc.annotation != "" {
			a["proxy.istio.io/config"] = tc.annotation
		}
		if got := capturesDNS(a, tc.mesh); got != tc.want {
			t.Errorf("%q over mesh %v: %v, want %v", tc.annotation, tc.mesh, got, tc.want)
		}
	}
}
