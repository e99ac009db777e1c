package v1alpha1

// AddOnMeta is how an add-on presents itself to users.
type AddOnMeta struct {
	// DisplayName is the add-on's name as shown to users.
	// +optional
	DisplayName string `json:"displayName,omitempty"`

	// Description says what the add-on does.
	// +optional
	Description string `json:"description,omitempty"`
}

// ConfigCoordinates name the CRD, and the object of it, that configures an
// add-on (the older, single-config form).
type ConfigCoordinates struct {
	// CRDName is the name of the configuring CRD.
	// +optional
	CRDName string `json:"crdName,omitempty"`

	// CRName is the name of the cluster-scoped object of that CRD.
	// +optional
	CRName string `json:"crName,omitempty"`

	// LastObservedGeneration is the generation of that object last seen.
	// +optional
	LastObservedGeneration int64 `json:"lastObservedGeneration,omitempty"`
}

// ConfigGroupResource is the group and resource of an add-on's configuration kind.
type ConfigGroupResource struct {
	// Group is the API group; empty for the core group.
	// +kubebuilder:default=""
	// +optional
	Group string `json:"group,omitempty"`

	// Resource is the plural resource name.
	// +kubebuilder:validation:MinLength=1
	// +required
	Resource string `json:"resource"`
}

// ConfigReferent names one configuration object.
type ConfigReferent struct {
	// Namespace is the object's namespace; empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the object's name.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
}

// AddOnConfig is one configuration object of an add-on, by group, resource and name.
type AddOnConfig struct {
	ConfigGroupResource `json:",inline"`
	ConfigReferent      `json:",inline"`
}

// ConfigSpecHash is a configuration object with the hash of its spec.
type ConfigSpecHash struct {
	ConfigReferent `json:",inline"`

	// SpecHash is the hash of the object's spec.
	// +optional
	SpecHash string `json:"specHash,omitempty"`
}

// PlacementRef names a Placement.
type PlacementRef struct {
	// Namespace is the Placement's namespace.
	// +kubebuilder:validation:MinLength=1
	// +required
	Namespace string `json:"namespace"`

	// Name is the Placement's name.
	// +kubebuilder:validation:MinLength=1
	// +required
	Name string `json:"name"`
}

// ObjectReference names an object related to an add-on.
type ObjectReference struct {
	// Group is the object's API group.
	// +required
	Group string `json:"group"`

	// Resource is the object's plural resource name.
	// +required
	Resource string `json:"resource"`

	// Namespace is the object's namespace, if namespaced.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name is the object's name.
	// +required
	Name string `json:"name"`
}
