{{- define "flotilla-hub.labels" -}}
app.kubernetes.io/name: flotilla-hub
app.kubernetes.io/managed-by: flotilla
{{- end }}

{{- define "flotilla-hub.image" -}}
{{- if .Values.image.reference -}}
{{ .Values.image.reference }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{/* The hub keeps its leader lease and own objects in one fixed namespace. */}}
{{- define "flotilla-hub.namespace" -}}
{{- if ne .Release.Namespace "open-cluster-management-hub" -}}
{{- fail (printf "install flotilla-hub into namespace open-cluster-management-hub (helm install --namespace open-cluster-management-hub --create-namespace), not %q: the hub keeps its leader lease there" .Release.Namespace) -}}
{{- end -}}
{{ .Release.Namespace }}
{{- end }}
