package main

import (
	"path/filepath"
	"testing"
)

// buildTree builds inputs into a new OUT and returns every file in it.
func buildTree(t *testing.T, args ...string) map[string]string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := meshc(t, "", append([]string{"build", "-o", out, "-q"}, args...)...); code != 0 {
		t.Fatalf("build %v: exit %d\n%s", args, code, errOut)
	}
	return snapshot(t, out)
}

const (
	endpointService = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop, labels: {istio-injection: enabled}}\n---\n" +
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {clusterIP: 10.96.0.10, selector: {app: web}, ports: [{port: 80, name: http}]}\n"
	endpointPod1 = "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIP: 10.1.0.9}\n"
	endpointPod2 = "apiVersion: v1\nkind: Pod\nmetadata: {name: p2, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c, image: i}]}\nstatus: {podIP: 10.1.0.10}\n"
)

// TestBuildEndpointOrder: two Pods of one Service in two files give the
// same build, byte for byte, when the files swap their contents.
func TestBuildEndpointOrder(t *testing.T) {
	for _, format := range []string{"bootstrap", "xds"} {
		a := writeFiles(t, map[string]string{"svc.yaml": endpointService, "a.yaml": endpointPod1, "b.yaml": endpointPod2})
		b := writeFiles(t, map[string]string{"svc.yaml": endpointService, "a.yaml": endpointPod2, "b.yaml": endpointPod1})
		sameTree(t, format+" with the Pods' files swapped", buildTree(t, a, "--format", format), buildTree(t, b, "--format", format))
	}
}
