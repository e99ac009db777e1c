package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// Path is where the hub's webhook server serves Handler.
const Path = "/convert-addon"

// CRDs are the CRDs whose versions Handler converts.
var CRDs = []string{
	"clustermanagementaddons.addon.open-cluster-management.io",
	"managedclusteraddons.addon.open-cluster-management.io",
	"addondeploymentconfigs.addon.open-cluster-management.io",
}

// maxReview bounds a ConversionReview's body: the API server sends at
// most a list's page of objects, each under etcd's 1.5 MiB.
const maxReview = 64 << 20

// Handler answers the API server's ConversionReviews (apiextensions.k8s.io/v1).
type Handler struct{}

func (Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "a ConversionReview is POSTed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReview))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not a ConversionReview with a request: %v", err), http.StatusBadRequest)
		return
	}
	review.Response = convertReview(review.Request)
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&review); err != nil {
		klog.FromContext(r.Context()).Error(err, "Cannot answer a ConversionReview")
	}
}

// convertReview converts every object of req, or fails them all.
func convertReview(req *apiextensionsv1.ConversionRequest) *apiextensionsv1.ConversionResponse {
	resp := &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{Status: metav1.StatusSuccess}}
	for i, obj := range req.Objects {
		out, err := Convert(obj.Raw, req.DesiredAPIVersion)
		if err != nil {
			return &apiextensionsv1.ConversionResponse{UID: req.UID, Result: metav1.Status{
				Status: metav1.StatusFailure, Message: fmt.Sprintf("object %d: %v", i, err),
			}}
		}
		resp.ConvertedObjects = append(resp.ConvertedObjects, runtime.RawExtension{Raw: out})
	}
	return resp
}

// Webhook returns the CRDs' conversion through the hub's webhook server at
// url (https://host:port) or, when service is set, through that Service
// (port 443), verified with caBundle.
func Webhook(url string, service *apiextensionsv1.ServiceReference, caBundle []byte) *apiextensionsv1.CustomResourceConversion {
	cfg := &apiextensionsv1.WebhookClientConfig{CABundle: caBundle}
	if service != nil {
		s := *service
		s.Path, s.Port = ptr.To(Path), ptr.To[int32](443)
		cfg.Service = &s
	} else {
		cfg.URL = ptr.To(url + Path)
	}
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook:  &apiextensionsv1.WebhookConversion{ClientConfig: cfg, ConversionReviewVersions: []string{"v1"}},
	}
}

// None is the conversion of a hub that serves no webhook: both versions
// serve the stored object as it is.
func None() *apiextensionsv1.CustomResourceConversion {
	return &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
}

// Install sets conv on the add-on CRDs, writing only those that differ.
func Install(ctx context.Context, client apiextensionsclient.Interface, conv *apiextensionsv1.CustomResourceConversion) error {
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, name := range CRDs {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			crd, err := api.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if equality.Semantic.DeepEqual(crd.Spec.Conversion, conv) {
				return nil
			}
			crd.Spec.Conversion = conv
			_, err = api.Update(ctx, crd, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("set the conversion of CRD %s: %w", name, err)
		}
	}
	return nil
}
