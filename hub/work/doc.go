// Package work is the hub side of ManifestWorks (shared/docs/contract.md,
// "ManifestWork"): what the hub checks before a work reaches an agent.
//
// It owns the ValidatingWebhookConfiguration
// manifestworkvalidators.admission.work.open-cluster-management.io and the
// handler behind it, served by the hub process's webhook server. The
// webhook refuses, on CREATE and UPDATE, a ManifestWork whose manifests
// together exceed 500 KiB of compact JSON, or with a manifest that is not
// an object or lacks apiVersion, kind or metadata.name, and says which
// manifest (by index, kind and name) and what limit. A CEL admission policy
// cannot measure the raw size of embedded objects, hence a webhook.
//
// The API server's schema validation runs first: as the CRD marks each
// manifest an embedded resource, it already refuses a manifest without
// apiVersion or kind (naming the field path). The webhook still checks
// them, for hubs whose CRDs differ.
//
// An UPDATE that leaves the manifests as they were is always admitted, so
// that a work stored before a stricter check can still lose its finalizer,
// gain labels and be deleted.
//
// Every hub process installs the configuration (InstallWebhook) at every
// start, once its webhook server answers, whether it leads or stands by:
// replicas advertise one address (a Service, or a port they share), so
// that with failurePolicy Fail ManifestWorks can be written as long as one
// replica serves, even while none leads. It
// watches nothing and writes no status.
package work
