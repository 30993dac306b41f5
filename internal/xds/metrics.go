package xds

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's Prometheus metrics, in a registry of its own
// so two servers in one process (tests) do not collide.
type metrics struct {
	registry        *prometheus.Registry
	connected       prometheus.Gauge
	pushes          *prometheus.CounterVec
	nacks           *prometheus.CounterVec
	pushLatency     *prometheus.HistogramVec
	compileDuration prometheus.Histogram
	compiles        *prometheus.CounterVec
	snapshotBytes   prometheus.Gauge
}

// Compile results, the values of meshc_compiles_total's result label.
const (
	resultServed   = "served"   // compiled and pushed
	resultRejected = "rejected" // error diagnostics: not served
	resultFailed   = "failed"   // the compile or build stopped
)

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		connected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meshc_xds_connected_proxies", Help: "Envoy nodes with at least one open xDS stream.",
		}),
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshc_xds_pushes_total", Help: "Discovery responses sent, by resource type.",
		}, []string{"type"}),
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshc_xds_nacks_total", Help: "Discovery responses Envoy rejected, by resource type.",
		}, []string{"type"}),
		pushLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "meshc_xds_push_latency_seconds", Help: "Time from a snapshot being set to Envoy's ACK of a new version, by resource type.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}, []string{"type"}),
		compileDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "meshc_compile_duration_seconds", Help: "Time from the start of a recompile to its snapshots being set.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 12),
		}),
		compiles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "meshc_compiles_total", Help: "Recompiles by result: served, rejected (error diagnostics) or failed.",
		}, []string{"result"}),
		snapshotBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "meshc_snapshot_bytes", Help: "Wire size of the distinct resources in the connected proxies' snapshots.",
		}),
	}
	m.registry.MustRegister(m.connected, m.pushes, m.nacks, m.pushLatency, m.compileDuration, m.compiles, m.snapshotBytes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
