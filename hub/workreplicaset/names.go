package workreplicaset

import "time"

const (
	// recorderName is the source of this controller's events.
	recorderName = "manifestworkreplicaset-controller"
	// maxConcurrentReconciles lets several replica sets reconcile at once.
	maxConcurrentReconciles = 4
	// writeWorkers bounds the ManifestWork writes one reconcile makes at
	// once: enough that a fan-out to 1,000 clusters is not paced by round
	// trips, few enough not to flood the API server.
	writeWorkers = 32
	// conflictRetry is how soon a reconcile whose write lost a race runs again.
	conflictRetry = time.Second
	// missingNamespaceRetry is how soon a work is created again when its
	// cluster's hub namespace does not exist yet (it comes with acceptance).
	missingNamespaceRetry = 10 * time.Second

	// ownerIndex indexes ManifestWorks by their replica set (the value of
	// ManifestWorkReplicaSetLabel), so that a reconcile reads only its own.
	ownerIndex = "workreplicaset.owner"
	// placementIndex indexes replica sets by "<namespace>/<placement>" of
	// each of their PlacementRefs.
	placementIndex = "workreplicaset.placement"
	// decisionClusterIndex indexes PlacementDecisions by the clusters they
	// hold, so that a cluster event finds its placements without a scan.
	decisionClusterIndex = "workreplicaset.decisionCluster"
)
