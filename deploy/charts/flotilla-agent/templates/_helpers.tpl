{{/*
Labels on every object, from the release as Helm's and OCM's charts have
them; flotilla unjoin finds what to remove by app.kubernetes.io/name.
*/}}
{{- define "flotilla-agent.labels" -}}
{{ include "flotilla-agent.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ include "flotilla-agent.version" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* What the Deployment selects its pod by: fixed, so that upgrades keep the selector. */}}
{{- define "flotilla-agent.selectorLabels" -}}
app.kubernetes.io/name: flotilla-agent
{{- end }}

{{- define "flotilla-agent.image" -}}
{{- if .Values.image.reference -}}
{{ .Values.image.reference }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{/* The version the image says it is: its tag (of image.reference too), else the chart's appVersion. */}}
{{- define "flotilla-agent.version" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- with .Values.image.reference -}}
{{- $last := last (splitList "/" .) -}}
{{- if and (contains ":" $last) (not (contains "@" .)) -}}
{{- $tag = last (splitList ":" $last) -}}
{{- end -}}
{{- end -}}
{{- $tag | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "flotilla-agent.executionRole" -}}
{{- if .Values.execution.rules -}}
open-cluster-management:flotilla-agent:execution
{{- else -}}
{{ required "execution.clusterRole must name a ClusterRole, or give execution.rules" .Values.execution.clusterRole }}
{{- end }}
{{- end }}

{{/* The cluster's name on the hub: required, and a DNS-1123 label, as the hub's namespace for it is. */}}
{{- define "flotilla-agent.clusterName" -}}
{{- $name := required "clusterName is required: the name of this cluster on the hub" .Values.clusterName | toString -}}
{{- if or (gt (len $name) 63) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $name)) -}}
{{- fail (printf "clusterName %q is not a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit (e.g. cluster1); the hub names the cluster's namespace after it" $name) -}}
{{- end -}}
{{ $name }}
{{- end }}

{{/*
flotilla-agent.reachable fails unless url is an https URL of a host that
the agent's pod can reach: not a loopback address (localhost, 127.0.0.0/8,
::1), which inside a pod is the pod itself, nor 0.0.0.0.
*/}}
{{- define "flotilla-agent.reachable" -}}
{{- $url := .url | trim -}}
{{- $u := urlParse $url -}}
{{- if or (ne $u.scheme "https") (not $u.host) -}}
{{- fail (printf "%s %q is not an https URL: give the hub's API server as this cluster's pods reach it, e.g. https://hub.example.com:6443" .value $url) -}}
{{- end -}}
{{- $host := regexReplaceAll ":[0-9]+$" $u.host "" | trimPrefix "[" | trimSuffix "]" | lower -}}
{{- if or (eq $host "localhost") (hasSuffix ".localhost" $host) (regexMatch "^127\\." $host) (eq $host "::1") (eq $host "0.0.0.0") (eq $host "::") -}}
{{- fail (printf "%s %q is a loopback address, which the agent cannot reach: inside its pod it is the pod itself. Give an address of the hub that this cluster's pods reach, e.g. https://hub.example.com:6443" .value $url) -}}
{{- end -}}
{{- end }}
