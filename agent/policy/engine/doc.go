// Package engine evaluates ConfigurationPolicies: it compares objects with
// object templates exactly as Open Cluster Management's
// config-policy-controller does, and words the outcome in OCM's messages
// (shared/docs/contract.md, "Policy").
//
// Idea: the engine is pure. It reads objects through a Reader (get and list
// by kind and namespace), never writes, and returns a Result: per object
// template the compliance, OCM's compliancy message ("namespaces [prod] not
// found"), and per object a structured ObjectResult with the fields that
// differ. For enforce it also returns the Actions that would bring the
// cluster in line (create, update, delete); the caller performs them and
// reports each outcome with Result.Done, which turns "not found" into "was
// created successfully". The agent reads through informers (so that what a
// policy read is what it watches), `flotilla policy test` through an
// ObjectSet loaded from YAML files or a ClusterReader over a kubeconfig.
//
// Matching: musthave wants every key of the template on the object with
// that value (extra keys are fine; a template list matches when every item
// matches some item of the object, and items with the same name are
// compared field by field); mustonlyhave wants maps and lists equal to the
// template (list order ignored); mustnothave wants no object to match the
// template. Compliance types are case-insensitive. Of metadata only labels
// and annotations are compared; status is compared but never enforced. A
// template without metadata.name matches every object of its kind in the
// namespaces that it or the namespaceSelector names, and is only ever
// informed: enforce acts on objects a template names (by name, or per
// object through an objectSelector), never on others.
//
// An action counts when the cluster shows it done (Result.Done): a
// deletion whose object is still there (finalizers) keeps the object
// NonCompliant, as "K8s deletion pending", saying what it waits for; so
// does an object that admission changed away from what enforce wrote.
//
// Go templates ({{ ... }}) in object definitions are resolved on the
// managed cluster, in text/template's language and with its output and
// errors, by internal/tmplexec (which looks no methods up by name, so that
// the agent binary stays small) with the functions lookup,
// fromConfigMap, fromSecret and fromClusterClaim (plus base64enc,
// base64dec, indent, autoindent, toInt, toBool, toLiteral: HelperFuncs,
// shared with the hub's templates), reading through the same Reader.
// A template that uses the object context variables (.ObjectNamespace,
// .ObjectName, .Object) or skipObject is resolved once per object it may
// apply to (context.go): per namespace the namespaceSelector selects when
// it names no namespace, per object the objectSelector selects when it
// names no object; every other template is resolved once.
// spec.customMessage templates replace the message after the compliance;
// they see .DefaultMessage and .Policy. Bad input (an unknown kind, an object without kind, a template
// that does not resolve) makes that object template NonCompliant with a
// message that says why; the engine never panics on input.
//
// Besides ConfigurationPolicies, EvaluateKind evaluates CertificatePolicies
// (certificates.go: the certificates of Secrets, with OCM's
// cert-policy-controller's messages) and Gatekeeper's ConstraintTemplates
// and constraints (gatekeeper.go: what Gatekeeper wrote in their status,
// with OCM's framework's messages), for the agent and `policy test` alike.
//
// The engine links client-go and apimachinery only, never
// k8s.io/kubernetes, so that the agent stays small.
package engine
