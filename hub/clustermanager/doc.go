// Package clustermanager keeps the ClusterManager cluster-manager
// (operator.open-cluster-management.io/v1), by which tools written for OCM,
// clusteradm among them, recognise a hub.
//
// A Flotilla hub is not installed by OCM's operator, and reads no field of
// the spec: the controller creates the object when it is missing, with a
// spec that says what this hub runs (ManifestWorkReplicaSet on, the add-on
// manager on: AddonManagement Enable), and then leaves the spec to its
// users, but for taking back the AddonManagement Disable that hubs before
// the add-on manager wrote. It owns the status: the hub's CRDs as
// related resources, and the conditions Applied (every CRD of the hub is
// established), Progressing (False: nothing is being rolled out),
// HubRegistrationDegraded and HubPlacementDegraded (False: those
// controllers run in the process that writes the status), and Flotilla's
// JoinPathOpen (the bootstrap ClusterRole exists). The status is only as
// fresh as the hub that writes it: a stopped hub leaves it as it was, as
// OCM's operator does.
//
// clusteradm get hub-info looks up OCM's hub components by name among the
// related resources (cluster-manager-registration-controller, ...,
// cluster-manager-addon-manager-controller while AddonManagement is on) and
// reads each as a Deployment; a name it cannot find fails the command.
// Flotilla runs them in one process, so there is no Deployment to show:
// each name is a Lease in the hub's namespace instead, which the leading
// process holds and renews every 30 seconds while it runs that component.
// clusteradm finds no Deployment of that name and prints the component
// without replicas, which is what is true.
//
// It watches the ClusterManager named cluster-manager and the bootstrap
// ClusterRole and reads the CRDs from the API server when it reconciles;
// a runnable of the leading process renews the Leases every 30 seconds.
package clustermanager
