// Package policy evaluates the hub's replicated Policies on the managed
// cluster and reports their compliance: the agent side of the contract's
// "Policy" section (shared/docs/contract.md), and what Open Cluster
// Management's governance-policy-framework and config-policy-controller do.
//
// Idea: the hub copies each Policy placed on cluster <c> into hub
// namespace <c> as <rootns>.<rootname>. For each ConfigurationPolicy in
// its policy-templates the agent keeps a ConfigurationPolicy of that name
// on the spoke in namespace <c> (named after the cluster, which it
// creates, where OCM's agent keeps them and policies written for OCM look
// for them; labelled with the policy), so that everyone on the cluster can
// see what is checked and how it stands (migrate.go moves, on start, those
// an older agent kept in its own namespace, status and all);
// evaluates it with package engine (the Policy's remediationAction
// overrides the template's); enforces (creates, updates, deletes) when
// asked; and writes the outcome twice: into the spoke ConfigurationPolicy's
// status (compliant, compliancyDetails, relatedObjects, history), and into
// the replicated Policy's status on the hub (compliant, and per template
// details[] with history[], newest first, at most 10, a new entry only
// when the message changes, plus Flotilla's structured results; see
// docs/policy-results.md). A CertificatePolicy is kept on the spoke the
// same way and evaluated here (engine.EvaluateKind); a Gatekeeper
// ConstraintTemplate or constraint is applied to the spoke and reported
// from the status Gatekeeper writes (kinds.go). A template of another kind, or one the spoke
// rejects, is reported as a template-error; so is one the hub marked with
// the hub-templates-error annotation, whose spoke copy is kept as it is
// until the hub resolves it.
//
// Dependencies (spec.dependencies, extraDependencies) are evaluated here,
// as OCM's framework does: a template whose dependencies are not at their
// compliance (a Policy: the replicated one in the cluster's hub namespace;
// another kind: the object on the spoke) is not on the spoke and reports
// Pending with OCM's "Dependencies were not satisfied" message; a change
// of a policy's compliance re-evaluates the policies that depend on it or
// on its templates. A PolicySet dependency reaches the agent only when
// the hub found no such set (otherwise the hub lists the set's policies in
// its place); it is never met and its message says so. See
// docs/policy-templates.md.
//
// Evaluation is driven by change, never by polling: with the default
// evaluationInterval ("watch") a template reads the spoke only through
// watches that the registry starts on first read (one per object, or per
// list of a kind in a namespace) and stops when no template reads them any
// longer, and each event of a watch evaluates the policies that read it
// again. An idle cluster costs no CPU, however many policies it has. With
// a duration the template is evaluated at most that often, reading the
// spoke directly; with "never", once per change of the template.
//
// Policy templates are decoded strictly by internal/policytemplate, the
// one decoding that the hub and `flotilla policy test` use too, so that a
// template-error reads the same everywhere. A template that waits for a
// deletion (finalizers, a Terminating namespace) watches the object it
// waits for whatever its interval, and is evaluated on each of its events
// until it is gone. Each new history message is an Event in the cluster's
// namespace on the hub, named as its history entry's eventName.
//
// A template removed from its policy, or a policy removed from the hub
// (deleted or disabled), has its spoke ConfigurationPolicy deleted; in
// enforce mode its pruneObjectBehavior deletes first what it managed
// (DeleteAll) or what it created (DeleteIfCreated, by UID).
//
// A reconcile is: get the policy (gone, being deleted or disabled →
// removePolicy) → one status patch at the end, only when the status
// changed, then events → phases, each running even when one before
// failed: evaluateTemplates (per template: ensure the spoke
// ConfigurationPolicy, decide whether it is due, evaluate, enforce, write
// its status), pruneTemplates, report.
//
// Watches, on the hub: Policies in the cluster's namespace only (the one
// cache, run per hub session, so that it follows the session's
// credentials). A reconcile reads its policy from the hub itself, not from
// the cache, which may not hold the agent's last status write yet. On the spoke: the agent's ConfigurationPolicies (metadata
// only), and what the templates read.
//
// Writes, on the hub: replicated Policies' status, and an event on the
// Policy whenever a template's message changes. On the spoke: the
// cluster's namespace, ConfigurationPolicies and CertificatePolicies in
// it, Gatekeeper's objects of the policies, and, when enforcing, the
// objects the templates name.
package policy
