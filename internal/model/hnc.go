package model

// The HNC kinds (hnc.x-k8s.io/v1alpha2), in meshc's own small structs.
// Status is never read: meshc recomputes it.

// MetaKVP is a key/value pair as HNC writes managed labels and annotations.
type MetaKVP struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// HierarchyConfiguration is a namespace's HNC configuration; its name must
// be "hierarchy".
type HierarchyConfiguration struct {
	ObjectMeta
	Spec HierarchySpec
}

// HierarchySpec is HierarchyConfiguration.spec.
type HierarchySpec struct {
	Parent                 string    `json:"parent,omitempty"`
	AllowCascadingDeletion bool      `json:"allowCascadingDeletion,omitempty"`
	Labels                 []MetaKVP `json:"labels,omitempty"`
	Annotations            []MetaKVP `json:"annotations,omitempty"`
}

// SubnamespaceAnchor asks HNC to create the child namespace named like the
// anchor, under the anchor's namespace.
type SubnamespaceAnchor struct {
	ObjectMeta
	Spec AnchorSpec
}

// AnchorSpec is SubnamespaceAnchor.spec.
type AnchorSpec struct {
	Labels      []MetaKVP `json:"labels,omitempty"`
	Annotations []MetaKVP `json:"annotations,omitempty"`
}

// HNCConfiguration is the cluster-wide HNC configuration; its name must be
// "config".
type HNCConfiguration struct {
	ObjectMeta
	Spec HNCConfigSpec
}

// HNCConfigSpec is HNCConfiguration.spec.
type HNCConfigSpec struct {
	Resources []ResourceSpec `json:"resources,omitempty"`
}

// ResourceSpec selects a resource type and its synchronization mode.
type ResourceSpec struct {
	Group    string `json:"group,omitempty"`
	Resource string `json:"resource"`
	Mode     string `json:"mode,omitempty"`
}
