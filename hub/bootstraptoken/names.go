package bootstraptoken

// Names of the bootstrap credentials.
const (
	// Group is the extra group of bootstrap tokens; the bootstrap ClusterRole
	// is bound to it.
	Group = "system:bootstrappers:managedcluster"
	// ClusterRoleName names the bootstrap ClusterRole, and the binding of it
	// to Group.
	ClusterRoleName = "open-cluster-management:bootstrap"
	// Namespace holds the bootstrap ServiceAccount (OCM's hub namespace).
	Namespace = "open-cluster-management"
	// ServiceAccountName is OCM's bootstrap ServiceAccount; its binding to
	// the bootstrap ClusterRole has the same name.
	ServiceAccountName = "agent-registration-bootstrap"
	// ServiceAccountUser is the user name of the bootstrap ServiceAccount.
	ServiceAccountUser = "system:serviceaccount:" + Namespace + ":" + ServiceAccountName

	// ManagedByLabel marks what flotilla created, with value ManagedByValue.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is ManagedByLabel's value.
	ManagedByValue = "flotilla"
	// AppLabel with value AppValue marks bootstrap token Secrets the way OCM's
	// cluster manager does; clusteradm get token --use-bootstrap-token
	// lists the Secrets of kube-system by it.
	AppLabel = "app"
	// AppValue is AppLabel's value.
	AppValue = "cluster-manager"
	// RotationLabel marks the token Secrets the hub created, and so rotates
	// and deletes; its value is RotationValue.
	RotationLabel = "flotilla.io/bootstrap-token-rotation"
	// RotationValue is RotationLabel's value.
	RotationValue = "hub"

	// ClusterLabel on a token Secret names the one cluster the token may
	// join (flotilla init --cluster-name); tokens without it join any.
	ClusterLabel = "registration.flotilla.io/token-cluster"
	// ClusterGroupPrefix begins the extra group of a token for one
	// cluster, ClusterGroup(<cluster>). The hub's admission lets its
	// holder ask for that cluster alone, and the hub deletes the token
	// once a CSR made with it is approved.
	ClusterGroupPrefix = Group + ":cluster:"
	// UsedByAnnotation on a token Secret for one cluster names the CSR
	// whose approval used the token up; the hub deletes it shortly after.
	UsedByAnnotation = "registration.flotilla.io/token-used-by"
)

// ClusterGroup is the extra group of a join token for cluster c alone.
func ClusterGroup(c string) string { return ClusterGroupPrefix + c }
