package emit

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// packer packs extension configs into Any, validating each message first:
// Envoy's generated validators stop at an Any, so a message packed
// unchecked would never be validated (docs/semantics/envoy-output.md §E3). Problems are
// collected, not panicked on, and become MC8002 for the proxy.
type packer struct {
	problems []string
}

type validator interface{ ValidateAll() error }

func (p *packer) any(what string, m proto.Message) *anypb.Any {
	if v, ok := m.(validator); ok {
		if err := v.ValidateAll(); err != nil {
			p.problems = append(p.problems, fmt.Sprintf("%s: %v", what, err))
		}
	}
	a := &anypb.Any{}
	// Deterministic so that equal resources have equal bytes, which
	// content hashes and sharing depend on.
	if err := anypb.MarshalFrom(a, m, proto.MarshalOptions{Deterministic: true}); err != nil {
		p.problems = append(p.problems, fmt.Sprintf("%s: %v", what, err))
	}
	return a
}
