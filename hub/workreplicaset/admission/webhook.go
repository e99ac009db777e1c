package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/hub/workreplicaset/health"
)

// WebhookPath is where the hub's webhook server serves ManifestWorkReplicaSet admission.
const WebhookPath = "/mutate-work-open-cluster-management-io-v1alpha1-manifestworkreplicaset"

// Handler is the admission handler of ManifestWorkReplicaSets.
type Handler struct {
	// Checker validates health checks.
	Checker *health.Checker
}

var _ admission.Handler = Handler{}

// Handle admits, records the author of, or refuses one CREATE or UPDATE.
func (h Handler) Handle(_ context.Context, req admission.Request) admission.Response {
	rs := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := json.Unmarshal(req.Object.Raw, rs); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the ManifestWorkReplicaSet: %w", err))
	}
	if rs.Namespace == "" {
		rs.Namespace = req.Namespace
	}
	var old *workv1alpha1.ManifestWorkReplicaSet
	if req.Operation == admissionv1.Update {
		old = &workv1alpha1.ManifestWorkReplicaSet{}
		if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the old ManifestWorkReplicaSet: %w", err))
		}
	}
	if old == nil || !reflect.DeepEqual(old.Spec.HealthCheck, rs.Spec.HealthCheck) {
		if err := h.Checker.Validate(rs.Spec.HealthCheck); err != nil {
			return refuse(rs, err)
		}
	}
	changed, err := shapeChanged(old, rs)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	author, keep := req.UserInfo.Username, true
	if !changed {
		author, keep = old.Annotations[workv1alpha1.ChangedByAnnotation]
	}
	return annotate(rs.Annotations, author, keep)
}

// shapeChanged says whether the request changes what shapes the works
// (always, for a new replica set).
func shapeChanged(old, rs *workv1alpha1.ManifestWorkReplicaSet) (bool, error) {
	if old == nil {
		return true, nil
	}
	a, err := shape(old)
	if err != nil {
		return false, fmt.Errorf("read the old ManifestWorkReplicaSet: %w", err)
	}
	b, err := shape(rs)
	if err != nil {
		return false, err
	}
	return !reflect.DeepEqual(a, b), nil
}

// shape is what shapes a replica set's works, as a JSON value: manifests
// that differ only in the order of their keys are the same.
func shape(rs *workv1alpha1.ManifestWorkReplicaSet) (any, error) {
	data, err := json.Marshal(workv1alpha1.RevisionData{
		ManifestWorkTemplate: rs.Spec.ManifestWorkTemplate,
		Overrides:            rs.Spec.Overrides,
		ReplicaDivision:      rs.Spec.ReplicaDivision,
	})
	if err != nil {
		return nil, fmt.Errorf("encode the template, overrides and replica division: %w", err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("decode the template, overrides and replica division: %w", err)
	}
	return v, nil
}

// annotate is the answer that leaves ChangedByAnnotation author (absent
// unless keep), with a JSON patch of that annotation alone when the
// request has another value.
func annotate(annotations map[string]string, author string, keep bool) admission.Response {
	got, has := annotations[workv1alpha1.ChangedByAnnotation]
	if has == keep && got == author {
		return admission.Allowed("")
	}
	key := "/metadata/annotations/" + strings.ReplaceAll(strings.ReplaceAll(workv1alpha1.ChangedByAnnotation, "~", "~0"), "/", "~1")
	var op map[string]any
	switch {
	case !keep:
		op = map[string]any{"op": "remove", "path": key}
	case annotations == nil:
		op = map[string]any{"op": "add", "path": "/metadata/annotations", "value": map[string]string{workv1alpha1.ChangedByAnnotation: author}}
	default:
		op = map[string]any{"op": "add", "path": key, "value": author}
	}
	patch, err := json.Marshal([]any{op})
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	resp := admission.Allowed("")
	patchType := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = patch, &patchType
	return resp
}

// refuse is the answer for an invalid replica set: 422 Invalid, as the
// API server itself answers for objects that fail validation, with one
// cause per field.
func refuse(rs *workv1alpha1.ManifestWorkReplicaSet, err error) admission.Response {
	var causes []metav1.StatusCause
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			var fe *field.Error
			if errors.As(e, &fe) {
				causes = append(causes, metav1.StatusCause{Type: metav1.CauseType(fe.Type), Message: fe.ErrorBody(), Field: fe.Field})
			}
		}
	}
	resp := admission.Denied(fmt.Sprintf("ManifestWorkReplicaSet %s/%s is refused: %v", rs.Namespace, rs.Name, err))
	resp.Result.Code = http.StatusUnprocessableEntity
	resp.Result.Reason = metav1.StatusReasonInvalid
	resp.Result.Details = &metav1.StatusDetails{
		Name:   rs.Name,
		Group:  workv1alpha1.GroupName,
		Kind:   "ManifestWorkReplicaSet",
		Causes: causes,
	}
	return resp
}

// SetupWebhook registers the Handler with the manager's webhook server,
// which the manager then starts.
func SetupWebhook(mgr manager.Manager) {
	mgr.GetWebhookServer().Register(WebhookPath, &webhook.Admission{Handler: Handler{Checker: health.NewChecker()}})
}
