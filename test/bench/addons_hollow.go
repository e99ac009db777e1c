package main

import (
	"context"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/flotilla-io/flotilla/api/addon/v1alpha1"
	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
	"github.com/flotilla-io/flotilla/internal/addon"
)

// hollowAddOns is the add-on registration side of the hollow clusters, a
// subset of what agent/addon does, with the same requests to the hub:
// each hollow agent watches its cluster's ManagedClusterAddOns and its
// add-on CSRs (by its cluster's label), writes driver csr into a kubeClient
// registration, asks for the registration's certificate with a CSR as the
// agent spells it, and once issued writes ClusterCertificateRotated=True.
// A hollow cluster has no install namespace to wait for: it asks once the
// hub says the add-on's manifests are applied (ManifestApplied=True),
// which is when a real cluster's namespace exists. It writes no Secret
// (it has no cluster) and checks no Lease: template add-ons' health is
// the hub's, from the works' feedback.
type hollowAddOns struct {
	// expiration is the CSRs' expirationSeconds, as the agent asks.
	expiration time.Duration
}

// hollowAddOn is one add-on of a hollow cluster, as its two watches saw it.
type hollowAddOn struct {
	// mca is the ManagedClusterAddOn as last seen, without managed fields.
	mca *addonv1alpha1.ManagedClusterAddOn
	// csr is the CSR asked for and not yet issued; issued says its
	// certificate came and rotated is written.
	csr     string
	issued  bool
	rotated bool
}

// hollowAddOnState is a hollow agent's add-ons by name, shared by its two
// watches.
type hollowAddOnState struct {
	mu     sync.Mutex
	addOns map[string]*hollowAddOn
}

var addOnStates sync.Map // *hollowAgent → *hollowAddOnState

func (h *hollowAddOns) state(a *hollowAgent) *hollowAddOnState {
	s, _ := addOnStates.LoadOrStore(a, &hollowAddOnState{addOns: map[string]*hollowAddOn{}})
	return s.(*hollowAddOnState)
}

// hooks are what the hollow agents run for add-ons: the agent's two
// add-on watches.
func (h *hollowAddOns) hooks() hollowHooks {
	return hollowHooks{watches: func(a *hollowAgent) []hollowWatch {
		own, _ := labels.NewRequirement(addon.ClusterNameLabel, selection.Equals, []string{a.name})
		has, _ := labels.NewRequirement(addon.AddOnNameLabel, selection.Exists, nil)
		csrs := labels.NewSelector().Add(*own, *has).String()
		return []hollowWatch{
			{"managedclusteraddons", hubPath(addonv1alpha1.GroupVersion, a.name, "managedclusteraddons", "", ""), nil,
				func(ctx context.Context, ev watch.EventType, m *hollowMeta, raw json.RawMessage) {
					h.onAddOn(ctx, a, ev, m, raw)
				}},
			{"addon certificatesigningrequests", hubPath(certificatesv1.SchemeGroupVersion, "", "certificatesigningrequests", "", ""),
				url.Values{"labelSelector": {csrs}},
				func(ctx context.Context, ev watch.EventType, _ *hollowMeta, raw json.RawMessage) {
					h.onCSR(ctx, a, ev, raw)
				}},
		}
	}}
}

// onAddOn is the agent's reconcile of one add-on on a change of its
// ManagedClusterAddOn.
func (h *hollowAddOns) onAddOn(ctx context.Context, a *hollowAgent, ev watch.EventType, m *hollowMeta, raw json.RawMessage) {
	st := h.state(a)
	if ev == watch.Deleted {
		st.mu.Lock()
		delete(st.addOns, m.Name)
		st.mu.Unlock()
		return
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := json.Unmarshal(raw, mca); err != nil {
		a.sh.failed("decode managedclusteraddons", err)
		return
	}
	mca.ManagedFields = nil
	st.mu.Lock()
	s := st.addOns[mca.Name]
	if s == nil {
		s = &hollowAddOn{}
		st.addOns[mca.Name] = s
	}
	s.mca = mca
	st.mu.Unlock()
	if !mca.DeletionTimestamp.IsZero() {
		return
	}
	reg := kubeClientRegistration(mca)
	if reg == nil {
		return
	}
	if mca.Status.KubeClientDriver != addon.KubeClientDriverCSR {
		// The driver goes first, alone, as the agent writes it.
		before := mca.DeepCopy()
		mca.Status.KubeClientDriver = addon.KubeClientDriverCSR
		h.patchStatus(ctx, a, before, mca)
		return
	}
	// The CSR is created under the lock, so that its watch, which may see
	// it issued before the create returns, knows it for this add-on's.
	st.mu.Lock()
	if s.csr == "" && !s.issued && reg.Subject.User != "" &&
		meta.IsStatusConditionTrue(mca.Status.Conditions, addon.ConditionManifestApplied) {
		name, err := h.askCertificate(ctx, a, mca.Name, reg.Subject)
		if err != nil {
			a.sh.failed("create addon certificatesigningrequests", err)
		}
		s.csr = name
	}
	rotate := s.issued && !s.rotated
	st.mu.Unlock()
	if rotate {
		h.writeRotated(ctx, a, mca)
	}
}

// kubeClientRegistration is mca's kube-apiserver-client registration, or nil.
func kubeClientRegistration(mca *addonv1alpha1.ManagedClusterAddOn) *addonv1alpha1.RegistrationConfig {
	for i := range mca.Status.Registrations {
		if mca.Status.Registrations[i].SignerName == addon.KubeAPIServerClientSigner {
			return &mca.Status.Registrations[i]
		}
	}
	return nil
}

// askCertificate creates a CSR for the subject of add-on a's registration
// as agent/addon does: a fresh ECDSA P-256 key, the add-on's DNS name,
// client usages, the agent's expiration.
func (h *hollowAddOns) askCertificate(ctx context.Context, a *hollowAgent, name string, subject addonv1alpha1.Subject) (string, error) {
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return "", err
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return "", err
	}
	request, err := certutil.MakeCSR(key, &pkix.Name{CommonName: subject.User, Organization: subject.Groups}, []string{name + "." + addon.AddOnDNSSuffix}, nil)
	if err != nil {
		return "", err
	}
	csr := &certificatesv1.CertificateSigningRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: certificatesv1.SchemeGroupVersion.String(), Kind: "CertificateSigningRequest"},
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: addon.CSRGenerateName(a.name, name),
			Labels:       map[string]string{addon.ClusterNameLabel: a.name, addon.AddOnNameLabel: name},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           request,
			SignerName:        addon.KubeAPIServerClientSigner,
			Usages:            []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
			ExpirationSeconds: ptr.To(int32(h.expiration / time.Second)),
		},
	}
	created := &hollowObject{}
	path := hubPath(certificatesv1.SchemeGroupVersion, "", "certificatesigningrequests", "", "")
	if err := a.hub.create(ctx, path, csr, created); err != nil {
		return "", err
	}
	return created.Metadata.Name, nil
}

// onCSR notes an add-on's certificate issued, and writes the condition
// that says so, as the agent does once it stored the certificate.
func (h *hollowAddOns) onCSR(ctx context.Context, a *hollowAgent, ev watch.EventType, raw json.RawMessage) {
	if ev == watch.Deleted {
		return
	}
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := json.Unmarshal(raw, csr); err != nil {
		a.sh.failed("decode addon certificatesigningrequests", err)
		return
	}
	if len(csr.Status.Certificate) == 0 {
		return
	}
	st := h.state(a)
	st.mu.Lock()
	s := st.addOns[csr.Labels[addon.AddOnNameLabel]]
	mine := s != nil && s.csr == csr.Name
	if mine {
		s.csr, s.issued = "", true
	}
	var mca *addonv1alpha1.ManagedClusterAddOn
	if mine && s.mca != nil {
		mca = s.mca.DeepCopy()
	}
	st.mu.Unlock()
	if mca != nil {
		h.writeRotated(ctx, a, mca)
	}
}

// writeRotated writes ClusterCertificateRotated=True on mca, reading it
// again after a conflict (the hub writes its status too).
func (h *hollowAddOns) writeRotated(ctx context.Context, a *hollowAgent, mca *addonv1alpha1.ManagedClusterAddOn) {
	path := hubPath(addonv1alpha1.GroupVersion, mca.Namespace, "managedclusteraddons", mca.Name, "")
	for attempt := 0; ; attempt++ {
		before := mca.DeepCopy()
		now := time.Now()
		meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{
			Type: addon.ConditionClusterCertificateRotated, Status: metav1.ConditionTrue, Reason: addon.ReasonClientCertificateUpdated,
			Message:            fmt.Sprintf("client certificate rotated starting from %s to %s", now.UTC().Format(time.RFC3339), now.Add(h.expiration).UTC().Format(time.RFC3339)),
			ObservedGeneration: mca.Generation,
		})
		err := h.patchStatus(ctx, a, before, mca)
		if err == nil {
			st := h.state(a)
			st.mu.Lock()
			if s := st.addOns[mca.Name]; s != nil {
				s.rotated = true
			}
			st.mu.Unlock()
			return
		}
		if !apierrors.IsConflict(err) || !retry(ctx, attempt) {
			return
		}
		mca = &addonv1alpha1.ManagedClusterAddOn{}
		if err := a.hub.get(ctx, path, nil, mca); err != nil {
			return
		}
	}
}

// patchStatus writes what changed of mca's status since before, guarded
// by the resourceVersion read, as the agent does.
func (h *hollowAddOns) patchStatus(ctx context.Context, a *hollowAgent, before, mca *addonv1alpha1.ManagedClusterAddOn) error {
	path := hubPath(addonv1alpha1.GroupVersion, mca.Namespace, "managedclusteraddons", mca.Name, "status")
	err := ignoreNotFound(a.patch(ctx, path, before, mca, nil, client.MergeFromWithOptimisticLock{}))
	if err != nil && !apierrors.IsConflict(err) {
		a.sh.failed("managedclusteraddons/status", err)
	}
	return err
}

// reportRolledOut adds to work's status the feedback the agent reports
// for each Deployment and DaemonSet with a WellKnownStatus rule once every
// replica is ready, as a healthy cluster's controllers make them: a
// hollow cluster has no controllers, and the work status simulator takes
// each manifest, which has no status, for the live object.
func reportRolledOut(work *workv1.ManifestWork) {
	for i := range work.Status.ResourceStatus.Manifests {
		ms := &work.Status.ResourceStatus.Manifests[i]
		rm := ms.ResourceMeta
		if rm.Group != "apps" || len(ms.StatusFeedback.Values) > 0 || !wellKnownFeedback(work, rm) || int(rm.Ordinal) >= len(work.Spec.Workload.Manifests) {
			continue
		}
		integer := func(name string, v int64) workv1.FeedbackValue {
			return workv1.FeedbackValue{Name: name, Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(v)}}
		}
		switch rm.Kind {
		case "Deployment":
			var d struct {
				Spec struct {
					Replicas *int64 `json:"replicas"`
				} `json:"spec"`
			}
			_ = json.Unmarshal(work.Spec.Workload.Manifests[rm.Ordinal].Raw, &d)
			r := ptr.Deref(d.Spec.Replicas, 1)
			ms.StatusFeedback.Values = []workv1.FeedbackValue{integer("ReadyReplicas", r), integer("Replicas", r), integer("AvailableReplicas", r)}
		case "DaemonSet":
			ms.StatusFeedback.Values = []workv1.FeedbackValue{integer("NumberReady", 1), integer("DesiredNumberScheduled", 1), integer("NumberAvailable", 1)}
		}
	}
}

// wellKnownFeedback says whether work asks for the well-known status of
// the object rm names.
func wellKnownFeedback(work *workv1.ManifestWork, rm workv1.ManifestResourceMeta) bool {
	for _, c := range work.Spec.ManifestConfigs {
		id := c.ResourceIdentifier
		if id.Group != rm.Group || id.Resource != rm.Resource || id.Name != rm.Name || id.Namespace != rm.Namespace {
			continue
		}
		for _, f := range c.FeedbackRules {
			if f.Type == workv1.WellKnownStatusType {
				return true
			}
		}
	}
	return false
}
