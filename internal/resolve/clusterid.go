package resolve

import (
	"strconv"
	"strings"

	"github.com/meshc/meshc/internal/host"
)

// ClusterID is what an outbound service cluster is built from: a service
// host, a port and a subset ("" for the whole service). Passes carry it
// and spell it only where a name is written or read: String is istiod's
// cluster name, SNI the name an Istio client sends for it by TLS SNI, which
// an AUTO_PASSTHROUGH gateway forwards on (docs/semantics/envoy-output.md).
type ClusterID struct {
	Port   uint32
	Subset string
	Host   host.Name
}

// UnknownServiceCluster is what a Gateway API route names for a backend
// istiod could not resolve (docs/semantics/gateway-api.md §G3.5): no
// such cluster exists, so Envoy answers 500.
var UnknownServiceCluster = ClusterID{Host: "UnknownService"}

// String is istiod's name, outbound|PORT|SUBSET|HOST.
func (c ClusterID) String() string {
	if c == UnknownServiceCluster {
		return string(c.Host)
	}
	return c.spell("|")
}

// SNI is the SNI form, outbound_.PORT_.SUBSET_.HOST.
func (c ClusterID) SNI() string { return c.spell("_.") }

func (c ClusterID) spell(sep string) string {
	return "outbound" + sep + strconv.FormatUint(uint64(c.Port), 10) + sep + c.Subset + sep + string(c.Host)
}

// ParseClusterID reads a cluster name in either form; false for any other
// cluster (BlackHoleCluster, PassthroughCluster, inbound|…).
func ParseClusterID(name string) (ClusterID, bool) {
	for _, sep := range []string{"|", "_."} {
		f := strings.SplitN(name, sep, 4)
		if len(f) != 4 || f[0] != "outbound" {
			continue
		}
		n, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil {
			return ClusterID{}, false
		}
		return ClusterID{Port: uint32(n), Subset: f[2], Host: host.Name(f[3])}, true
	}
	return ClusterID{}, false
}
