package emit

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/meshc/meshc/internal/load"
	"github.com/meshc/meshc/internal/model"
)

func TestParseADS(t *testing.T) {
	for _, tt := range []struct {
		in   string
		host string
		port uint32
		bad  bool
	}{
		{in: "127.0.0.1:15010", host: "127.0.0.1", port: 15010},
		{in: "meshc-serve.infra.svc:15010", host: "meshc-serve.infra.svc", port: 15010},
		{in: "[::1]:15010", host: "::1", port: 15010},
		{in: "meshc-serve", bad: true},
		{in: ":15010", bad: true},
		{in: "host:0", bad: true},
		{in: "host:65536", bad: true},
		{in: "host:http", bad: true},
	} {
		host, port, err := ParseADS(tt.in)
		if (err != nil) != tt.bad || host != tt.host || port != tt.port {
			t.Errorf("ParseADS(%q) = %q, %d, %v", tt.in, host, port, err)
		}
	}
}

// TestADSBootstraps: with Options.ADS every proxy's output is one
// bootstrap, valid for Envoy, with the node id of its file bootstrap, a
// cluster to the server (by address or DNS) and the agent's when TLS or a
// served resource needs it, fetching clusters and listeners over ADS.
func TestADSBootstraps(t *testing.T) {
	gw, _ := load.Bytes("gw.yaml", []byte(strings.Join(gatewayWorld, "\n---\n")))
	for _, objs := range [][]model.Object{bookinfoObjects(t), gw} {
		m := loadMesh(t, objs)
		for _, tt := range []struct {
			addr string
			tls  TLSMode
			want clusterv3.Cluster_DiscoveryType
		}{
			{"127.0.0.1:15010", TLSIstio, clusterv3.Cluster_STATIC},
			{"meshc-serve.infra.svc:15010", TLSOff, clusterv3.Cluster_STRICT_DNS},
		} {
			ads, files := New(m, Options{ADS: tt.addr, TLS: tt.tls}), New(m, Options{TLS: tt.tls})
			served := New(m, Options{Format: XDS, TLS: tt.tls})
			for _, v := range m.Views {
				what := fmt.Sprintf("%s (%s, %s)", v.Proxy.ID(), tt.addr, tt.tls)
				_, out, err := ads.Render(v)
				if err != nil {
					t.Fatal(err)
				}
				if len(out.Files) != 1 || out.Files[0].Path != filepath.Join(v.Proxy.Namespace, v.Proxy.Name+".json") {
					t.Fatalf("%s: files %v, want one bootstrap", what, out.Files)
				}
				var b bootstrapv3.Bootstrap
				if err := protojson.Unmarshal(out.Files[0].Data, &b); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if err := deepValidate(&b); err != nil {
					t.Errorf("%s: %v", what, err)
				}
				if again, err := indentedJSON(&b, 0); err != nil || !bytes.Equal(append(again, '\n'), out.Files[0].Data) {
					t.Errorf("%s: not protojson's rendering of itself (%v)", what, err)
				}

				_, fileOut, err := files.Render(v)
				if err != nil {
					t.Fatal(err)
				}
				var fb bootstrapv3.Bootstrap
				if err := protojson.Unmarshal(fileOut.Files[0].Data, &fb); err != nil {
					t.Fatal(err)
				}
				if b.GetNode().GetId() != fb.GetNode().GetId() {
					t.Errorf("%s: node %q, the file bootstrap's is %q", what, b.GetNode().GetId(), fb.GetNode().GetId())
				}

				cfg, _, err := served.Render(v)
				if err != nil {
					t.Fatal(err)
				}
				r, err := served.render(cfg.Clusters, cfg.Listeners, nil, nil, true)
				if err != nil {
					t.Fatal(err)
				}
				wantSDS := tt.tls == TLSIstio || r.mentions(sdsClusterRef)
				var got []string
				for _, c := range b.GetStaticResources().GetClusters() {
					got = append(got, c.GetName())
					if c.GetName() == XDSCluster && c.GetType() != tt.want {
						t.Errorf("%s: %s is %s, want %s", what, XDSCluster, c.GetType(), tt.want)
					}
				}
				want := []string{XDSCluster}
				if wantSDS {
					want = append(want, SDSCluster)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) || len(b.GetStaticResources().GetListeners()) > 0 {
					t.Errorf("%s: static clusters %v and %d listeners, want %v alone", what, got, len(b.GetStaticResources().GetListeners()), want)
				}
				dyn := b.GetDynamicResources()
				if dyn.GetAdsConfig().GetGrpcServices()[0].GetEnvoyGrpc().GetClusterName() != XDSCluster ||
					dyn.GetCdsConfig().GetAds() == nil || dyn.GetLdsConfig().GetAds() == nil {
					t.Errorf("%s: dynamic resources not all over ADS from %s: %v", what, XDSCluster, dyn)
				}
			}
		}
	}
}
