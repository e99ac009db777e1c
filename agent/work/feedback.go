package work

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/utils/ptr"

	workv1 "github.com/flotilla-io/flotilla/api/work/v1"
)

// wellKnownStatus are the values a WellKnownStatus rule reports, by kind;
// paths are relative to .status, as in JSONPaths rules.
var wellKnownStatus = map[schema.GroupKind][]workv1.JSONPath{
	{Group: "apps", Kind: "Deployment"}: {
		{Name: "ReadyReplicas", Path: ".readyReplicas"},
		{Name: "Replicas", Path: ".replicas"},
		{Name: "AvailableReplicas", Path: ".availableReplicas"},
	},
	{Group: "batch", Kind: "Job"}: {
		{Name: "JobComplete", Path: `.conditions[?(@.type=="Complete")].status`},
		{Name: "JobSucceeded", Path: ".succeeded"},
	},
	{Kind: "Pod"}: {
		{Name: "PodReady", Path: `.conditions[?(@.type=="Ready")].status`},
		{Name: "PodPhase", Path: ".phase"},
	},
	{Group: "apps", Kind: "DaemonSet"}: {
		{Name: "NumberReady", Path: ".numberReady"},
		{Name: "DesiredNumberScheduled", Path: ".desiredNumberScheduled"},
		{Name: "NumberAvailable", Path: ".numberAvailable"},
	},
}

// feedbackValues reads the values that rules select from obj's status. A
// field that is missing reports nothing; a path that does not parse, a
// name given twice, or a list or object longer than 1 KiB is an error, and
// the other values are still reported.
func feedbackValues(gk schema.GroupKind, obj map[string]any, rules []workv1.FeedbackRule) ([]workv1.FeedbackValue, error) {
	var paths []workv1.JSONPath
	for _, rule := range rules {
		switch rule.Type {
		case workv1.WellKnownStatusType:
			paths = append(paths, wellKnownStatus[gk]...)
		case workv1.JSONPathsType:
			paths = append(paths, rule.JSONPaths...)
		}
	}
	status, _ := obj["status"].(map[string]any)
	var (
		values []workv1.FeedbackValue
		errs   []error
		seen   = map[string]bool{}
	)
	for _, p := range paths {
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("%s: reported twice; the first value stands", p.Name))
			continue
		}
		seen[p.Name] = true
		v, err := readValue(status, p.Path)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", p.Name, err))
		case v != nil:
			values = append(values, workv1.FeedbackValue{Name: p.Name, Value: *v})
		}
	}
	return values, errors.Join(errs...)
}

// readValue reads path (relative to status) as a typed value, or nil when
// the field is missing.
func readValue(status map[string]any, path string) (*workv1.FieldValue, error) {
	jp := jsonpath.New("feedback").AllowMissingKeys(true)
	if err := jp.Parse("{" + path + "}"); err != nil {
		return nil, fmt.Errorf("invalid JSONPath %q: %w", path, err)
	}
	if status == nil {
		return nil, nil
	}
	results, err := jp.FindResults(status)
	if err != nil {
		return nil, fmt.Errorf("JSONPath %q: %w", path, err)
	}
	var found []any
	for _, rs := range results {
		for _, r := range rs {
			if r.IsValid() && r.CanInterface() {
				found = append(found, r.Interface())
			}
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return fieldValue(found[0])
	}
	return rawValue(found)
}

// fieldValue types one value: Integer, String, Boolean, or JsonRaw for
// anything else (lists, objects, fractions).
func fieldValue(v any) (*workv1.FieldValue, error) {
	switch x := v.(type) {
	case int64:
		return &workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(x)}, nil
	case int:
		return &workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(int64(x))}, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return &workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To(int64(x))}, nil
		}
	case string:
		return &workv1.FieldValue{Type: workv1.String, String: ptr.To(x)}, nil
	case bool:
		return &workv1.FieldValue{Type: workv1.Boolean, Boolean: ptr.To(x)}, nil
	case nil:
		return nil, nil
	}
	if reflect.ValueOf(v).Kind() == reflect.Invalid {
		return nil, nil
	}
	return rawValue(v)
}

// rawValue is v as JSON text, at most workv1.MaxJSONRawLength bytes.
func rawValue(v any) (*workv1.FieldValue, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(data) > workv1.MaxJSONRawLength {
		return nil, fmt.Errorf("the value is %d bytes of JSON, over the limit of %d", len(data), workv1.MaxJSONRawLength)
	}
	return &workv1.FieldValue{Type: workv1.JSONRaw, JSONRaw: ptr.To(string(data))}, nil
}

// feedbackCondition is the StatusFeedbackSynced condition after reading
// values, with err the problems met.
func feedbackCondition(values []workv1.FeedbackValue, err error, gen int64) metav1.Condition {
	c := metav1.Condition{Type: workv1.ManifestStatusFeedbackSynced, Status: metav1.ConditionTrue, ObservedGeneration: gen}
	switch {
	case err != nil:
		c.Status, c.Reason = metav1.ConditionFalse, workv1.ReasonStatusFeedbackSyncFailed
		c.Message = truncate("Cannot read some status values: " + strings.ReplaceAll(err.Error(), "\n", "; "))
	case len(values) == 0:
		c.Reason, c.Message = workv1.ReasonNoStatusFeedbackSynced, "No status value is set yet"
	default:
		c.Reason, c.Message = workv1.ReasonStatusFeedbackSynced, "Status values are synced"
	}
	return c
}
