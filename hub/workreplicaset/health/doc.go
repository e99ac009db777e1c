// Package health is the health check of a ManifestWorkReplicaSet's rollout
// (spec.healthCheck, a Flotilla extension; docs/rollback.md): what, beyond
// Applied and Available, a cluster's ManifestWork must report before the
// rollout counts the cluster as succeeded, so that a release that comes up
// but runs at half capacity fails the gate and can be rolled back.
//
// It reads the status feedback the agent reports for each manifest
// (status.resourceStatus.manifests[].statusFeedback, as the template's
// manifestConfigs[].feedbackRules ask for: WellKnownStatus names a
// Deployment's values ReadyReplicas, Replicas and AvailableReplicas, a
// JSONPaths rule names its own) and checks each manifest that the check's
// target selects:
//
//   - feedback: a value equals another value of the same manifest
//     (equalsValue) or a literal (equals, compared with the value's string
//     form: 3, true, Ready, or compact JSON for a JsonRaw value);
//   - expression: a CEL expression over the variables manifest (group,
//     version, kind, resource, namespace, name) and values (the feedback
//     values by name: int, string, bool, or the parsed JSON of a JsonRaw
//     value) that must yield true.
//
// Feedback is only read when it is for the work's current generation, as
// the work's Available condition's observedGeneration says: values reported
// for the previous spec say nothing about the new one. A value not reported
// yet, a stale status, a manifest that reports no feedback or an expression
// that fails at run time leave the cluster not healthy, with a message that
// says which manifest, which value and why; the rollout's progressDeadline
// then fails it as it fails one that never becomes Available.
//
// A Checker is pure (it reads only the objects it is given) and safe for
// concurrent use. It keeps compiled expressions, so that a fleet of
// thousands of works with one expression compiles it once; each evaluation
// is bounded by the cost limit the Kubernetes API server gives one
// expression. Validate is what the hub's admission (package
// hub/workreplicaset/admission) refuses a healthCheck with, naming the field.
package health
