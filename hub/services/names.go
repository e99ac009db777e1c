package services

const (
	// ImporterClusterRole is the shared ClusterRole that lets a member
	// cluster's agent read the ImportedServices of its set's namespace,
	// through one RoleBinding per member there.
	ImporterClusterRole = "open-cluster-management:flotilla:services-importer"
	// ExportPolicyName names the ValidatingAdmissionPolicy, and its
	// binding, that keeps an agent's ExportedServices labelled with its own
	// cluster and the Service they describe.
	ExportPolicyName = "flotilla-exportedservice-labels"

	// reasonInClusterSet and reasonNotInClusterSet are the reasons of the
	// InClusterSet condition.
	reasonInClusterSet    = "InClusterSet"
	reasonNotInClusterSet = "NotInClusterSet"

	// exportNameIndex indexes ExportedServices by metadata.name,
	// importNameIndex ImportedServices by metadata.name and
	// importClusterIndex ImportedServices by the clusters they list.
	exportNameIndex    = "mcs.flotilla.io/exportedservice-name"
	importNameIndex    = "mcs.flotilla.io/importedservice-name"
	importClusterIndex = "mcs.flotilla.io/importedservice-cluster"
)

// ImporterRoleBindingName names the RoleBinding, in its set's namespace,
// that lets cluster c's agent read the set's ImportedServices.
func ImporterRoleBindingName(c string) string {
	return ImporterClusterRole + ":" + c
}
