{{/* Labels on every object; flotilla unjoin finds what to remove by them. */}}
{{- define "flotilla-agent.labels" -}}
app.kubernetes.io/name: flotilla-agent
app.kubernetes.io/managed-by: flotilla
{{- end }}

{{- define "flotilla-agent.image" -}}
{{- if .Values.image.reference -}}
{{ .Values.image.reference }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{- define "flotilla-agent.executionRole" -}}
{{- if .Values.execution.rules -}}
open-cluster-management:flotilla-agent:execution
{{- else -}}
{{ required "execution.clusterRole must name a ClusterRole, or give execution.rules" .Values.execution.clusterRole }}
{{- end }}
{{- end }}
