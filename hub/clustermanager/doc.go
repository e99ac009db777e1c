// Package clustermanager keeps the ClusterManager cluster-manager
// (operator.open-cluster-management.io/v1), by which tools written for OCM,
// clusteradm among them, recognise a hub.
//
// A Flotilla hub is not installed by OCM's operator, and reads no field of
// the spec: the controller creates the object when it is missing, with a
// spec that says what this hub runs (ManifestWorkReplicaSet on, the add-on
// manager off: the hub serves the add-on APIs but installs no add-on), and
// then leaves the spec to its users. It owns the status: the hub's CRDs as
// related resources, and the conditions Applied (every CRD of the hub is
// established), Progressing (False: nothing is being rolled out),
// HubRegistrationDegraded and HubPlacementDegraded (False: those
// controllers run in the process that writes the status). The status is
// only as fresh as the hub that writes it: a stopped hub leaves it as it
// was, as OCM's operator does.
//
// It watches the ClusterManager named cluster-manager and reads the CRDs
// from the API server when it reconciles.
package clustermanager
