package bootstrap

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
)

// clusterInfoReader names the Role and RoleBinding that let anyone read
// kube-public/cluster-info, the same grant kubeadm makes.
const clusterInfoReader = "flotilla:bootstrap-signer-clusterinfo"

// PublishClusterInfo writes ConfigMap kube-public/cluster-info holding a
// kubeconfig with the hub's URL and CA, readable without credentials.
// The bootstrap signer controller adds token signatures to it.
func PublishClusterInfo(ctx context.Context, client kubernetes.Interface, server string, caData []byte) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[""] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caData}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	cms := client.CoreV1().ConfigMaps(metav1.NamespacePublic)
	cm, err := cms.Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.ConfigMapClusterInfo, Namespace: metav1.NamespacePublic},
			Data:       map[string]string{bootstrapapi.KubeConfigKey: string(data)},
		}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create cluster-info: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read cluster-info: %w", err)
	case cm.Data[bootstrapapi.KubeConfigKey] != string(data):
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[bootstrapapi.KubeConfigKey] = string(data)
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update cluster-info: %w", err)
		}
	}
	return ensureClusterInfoRBAC(ctx, client)
}

func ensureClusterInfoRBAC(ctx context.Context, client kubernetes.Interface) error {
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: clusterInfoReader, Namespace: metav1.NamespacePublic},
		Rules: []rbacv1.PolicyRule{{
			APIGroups:     []string{""},
			Resources:     []string{"configmaps"},
			ResourceNames: []string{bootstrapapi.ConfigMapClusterInfo},
			Verbs:         []string{"get"},
		}},
	}
	if _, err := client.RbacV1().Roles(metav1.NamespacePublic).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create Role %s: %w", clusterInfoReader, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterInfoReader, Namespace: metav1.NamespacePublic},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: clusterInfoReader},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "system:anonymous"}},
	}
	if _, err := client.RbacV1().RoleBindings(metav1.NamespacePublic).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create RoleBinding %s: %w", clusterInfoReader, err)
	}
	return nil
}
