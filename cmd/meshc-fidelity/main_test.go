package main

import (
	"slices"
	"testing"

	"github.com/meshc/meshc/internal/load"
)

// TestDeployedGateways: the gateway proxies istiod deploys are those of
// class istio Gateways without a hostname address, named NAME-istio or
// by the name-override annotation.
func TestDeployedGateways(t *testing.T) {
	objs, ds := load.Bytes("gw.yaml", []byte(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: plain, namespace: gw}
spec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: renamed, namespace: gw, annotations: {gateway.istio.io/name-override: edge}}
spec: {gatewayClassName: istio, listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: with-ip, namespace: gw}
spec: {gatewayClassName: istio, addresses: [{type: IPAddress, value: 10.0.0.1}], listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: manual, namespace: gw}
spec: {gatewayClassName: istio, addresses: [{type: Hostname, value: ingress}], listeners: [{name: http, port: 80, protocol: HTTP}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: foreign, namespace: gw}
spec: {gatewayClassName: other, listeners: [{name: http, port: 80, protocol: HTTP}]}
`))
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	got := deployedGateways(objs)
	if want := []string{"gw/plain-istio", "gw/edge", "gw/with-ip-istio"}; !slices.Equal(got, want) {
		t.Errorf("deployedGateways = %v, want %v", got, want)
	}
}
