// Package admission is the hub's admission webhook for
// ManifestWorkReplicaSets (Flotilla extensions, docs/rollback.md): it
// records who changed a replica set, which the revisions of its rollout
// name as their author, and refuses a health check that cannot run.
//
// On CREATE, and on every UPDATE that changes what shapes the replica
// set's works (spec.manifestWorkTemplate, spec.overrides,
// spec.replicaDivision, compared as JSON values), it sets annotation
// work.flotilla.io/changed-by to the user the API server authenticated
// (request.userInfo.username), replacing any value the client sent. On
// other UPDATEs it puts back the value the stored object had (or removes
// one that it did not have), so that no client can forge an author. It
// refuses, on CREATE and on an UPDATE that changes it, a spec.healthCheck
// that package health finds fault with (an expression that does not
// compile or yields no bool, a feedback check without a value to compare
// with), naming the field. A health check stored before stays editable
// otherwise.
//
// It owns the MutatingWebhookConfiguration
// manifestworkreplicasets.admission.work.flotilla.io, which every hub
// process installs at every start (Install), once its webhook server
// answers, as package hub/work does for ManifestWorks. Its match
// conditions leave out, without a call, the UPDATEs that change neither
// the spec nor the annotation: the hub's own finalizer, labels, and
// work.flotilla.io/paused, so that a rollout can be paused, and a replica
// set deleted, while no hub serves the webhook. The rest fails closed
// (failurePolicy Fail), as for ManifestWorks: a change admitted without
// the hub would have no author, or a forged one, in the revision history,
// and a health check that does not compile would fail every cluster's gate
// and, with spec.rollback, undo a good release. Hub replicas serve it
// whether they lead or stand by, so it is down only while every hub is.
//
// A webhook rather than a MutatingAdmissionPolicy: those are GA from
// Kubernetes 1.36, which the embedded API server is, but not on the older
// clusters a hub runs on with --kubeconfig, and checking an expression
// against package health's CEL environment needs the hub's code anyway.
// The patch touches only that annotation, never a field the hub's types
// might not know.
package admission
