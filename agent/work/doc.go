// Package work applies the hub's ManifestWorks on the managed cluster: the
// agent side of the contract's "ManifestWork" section, and the work agent
// of Open Cluster Management.
//
// Idea: a ManifestWork in the cluster's hub namespace lists objects; the
// agent applies them on the spoke, in kind order (namespaces, CRDs and
// other cluster-scoped objects, RBAC, configuration, services, workloads,
// other kinds, webhooks), each with its update strategy (Update merges the
// manifest onto the live object, ServerSideApply, CreateOnly, ReadOnly),
// and reports on each in the work's status. Every object it applies is
// owned (a non-controller ownerReference) by the spoke's
// AppliedManifestWork <hubHash>-<work>, which records what was applied;
// deleting the work deletes or orphans them by its deleteOption. An
// object changed on the spoke is put back as soon as its watch reports
// it, and counted in the manifest's drift record (docs/drift.md). Of
// two works that apply one object, the one whose AppliedManifestWork
// comes first among its owners keeps it; the other adds only its
// ownerReference, reports which work holds the object (owners.go), and
// takes it over once that work lets go.
//
// A reconcile is: get the work → finalizer → one status patch at the end,
// only when the status changed → phases, one file each: plan (decode and
// resolve kinds), checkExecutor (SubjectAccessReviews), ensureApplied,
// apply, prune, recordApplied, report, expire. A work being deleted goes
// to reconcileDelete instead. The evictor runs beside, removing records
// of works gone from a reachable hub after a grace period.
//
// Watches, on the hub: ManifestWorks in the cluster's namespace only (the
// one cache, run per hub session, so that it follows the session's
// credentials). On the spoke: metadata only, of AppliedManifestWorks and
// of the kinds the agent applied, selected by AgentLabel, so that the
// agent caches names and versions of its own objects and nothing else;
// objects are read with direct GETs when their version changed.
//
// Status feedback of an applied object is read whenever its watch reports a
// change, whatever feedbackScrapeType says (Watch and Poll both get it at
// once); a ReadOnly object, which the agent does not label, at each resync.
//
// Writes, on the hub: ManifestWork finalizers and status, events on
// ManifestWorks, and deletes works whose ttlSecondsAfterFinished ran out.
// On the spoke: the applied objects (with AgentLabel and the
// open-cluster-management.io/object-hash annotation), and
// AppliedManifestWorks (labelled with AgentLabel and the cluster's name).
package work
