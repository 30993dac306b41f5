package load

import (
	"time"

	"google.golang.org/protobuf/proto"
	networking "istio.io/api/networking/v1alpha3"

	"github.com/meshc/meshc/internal/model"
)

// checkIstio applies the checks of istiod's validation that the CRD
// schemas leave out but that make istiod reject an object, so it is left
// out as istiod would ignore it.
func checkIstio(m proto.Message) []fieldError {
	var errs []fieldError
	if vs, ok := m.(*networking.VirtualService); ok {
		for i, r := range vs.GetHttp() {
			if t := r.GetTimeout(); t != nil {
				if msg := checkDuration(t.AsDuration()); msg != "" {
					errs = append(errs, fieldError{Path: model.Path{}.Key("spec").Key("http").Index(i).Key("timeout"), Msg: msg})
				}
			}
		}
	}
	return errs
}

// checkDuration is istiod's duration rule for a route timeout: at least
// a millisecond, in whole milliseconds.
func checkDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "duration " + d.String() + " is rejected by istiod's validation: it must be at least 1ms"
	case d%time.Millisecond != 0:
		return "duration " + d.String() + " is rejected by istiod's validation: it must be whole milliseconds"
	}
	return ""
}
