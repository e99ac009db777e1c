{{/* Labels on every object, from the release as Helm's and OCM's charts have them. */}}
{{- define "flotilla-hub.labels" -}}
{{ include "flotilla-hub.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ include "flotilla-hub.version" . | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* What the Deployment selects its pods by: fixed, so that upgrades keep the selector. */}}
{{- define "flotilla-hub.selectorLabels" -}}
app.kubernetes.io/name: flotilla-hub
{{- end }}

{{- define "flotilla-hub.image" -}}
{{- if .Values.image.reference -}}
{{ .Values.image.reference }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{/* The version the image says it is: its tag (of image.reference too), else the chart's appVersion. */}}
{{- define "flotilla-hub.version" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- with .Values.image.reference -}}
{{- $last := last (splitList "/" .) -}}
{{- if and (contains ":" $last) (not (contains "@" .)) -}}
{{- $tag = last (splitList ":" $last) -}}
{{- end -}}
{{- end -}}
{{- $tag | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/* The hub keeps its leader lease and own objects in one fixed namespace. */}}
{{- define "flotilla-hub.namespace" -}}
{{- if ne .Release.Namespace "open-cluster-management-hub" -}}
{{- fail (printf "install flotilla-hub into namespace open-cluster-management-hub (helm install --namespace open-cluster-management-hub --create-namespace), not %q: the hub keeps its leader lease there" .Release.Namespace) -}}
{{- end -}}
{{ .Release.Namespace }}
{{- end }}

{{/*
The Secret of the webhook's serving certificate: webhook.certificate.secretName,
or with cert-manager the one its Certificate writes. Empty: the hub issues
itself one.
*/}}
{{- define "flotilla-hub.webhookSecret" -}}
{{- if .Values.webhook.certificate.secretName -}}
{{ .Values.webhook.certificate.secretName }}
{{- else if .Values.webhook.certificate.certManager.enabled -}}
flotilla-hub-webhook-tls
{{- end }}
{{- end }}

{{/* What cannot work is refused here, before anything is installed. */}}
{{- define "flotilla-hub.validate" -}}
{{- include "flotilla-hub.reachable" (dict "value" "apiServer" "url" .Values.apiServer "who" "the agents, and the hub controllers in their pods,") -}}
{{- if and .Values.webhook.enabled (gt (int .Values.replicas) 1) (not (include "flotilla-hub.webhookSecret" .)) -}}
{{- fail (printf "replicas=%d needs one webhook certificate for every replica: give webhook.certificate.secretName (a kubernetes.io/tls Secret valid for flotilla-hub-webhook.%s.svc) or webhook.certificate.certManager.enabled=true with an issuerRef; without one each replica issues its own and the API server trusts only the last (or set webhook.enabled=false)" (int .Values.replicas) .Release.Namespace) -}}
{{- end -}}
{{- if and .Values.webhook.certificate.certManager.enabled (not .Values.webhook.certificate.certManager.issuerRef.name) -}}
{{- fail "webhook.certificate.certManager.enabled needs webhook.certificate.certManager.issuerRef.name: the cert-manager Issuer (or ClusterIssuer, with issuerRef.kind) that signs the webhook's certificate" -}}
{{- end -}}
{{- end }}

{{/*
flotilla-hub.reachable fails unless url is an https URL of a host that an
agent in another pod, or another cluster, can reach: not empty, not a
loopback address (localhost, 127.0.0.0/8, ::1), not 0.0.0.0.
*/}}
{{- define "flotilla-hub.reachable" -}}
{{- $url := .url | default "" | trim -}}
{{- if not $url -}}
{{- fail (printf "%s is required: the hub's API server URL as %s reach it, e.g. https://hub.example.com:6443" .value .who) -}}
{{- end -}}
{{- $u := urlParse $url -}}
{{- if or (ne $u.scheme "https") (not $u.host) -}}
{{- fail (printf "%s %q is not an https URL: give the hub's API server as %s reach it, e.g. https://hub.example.com:6443" .value $url .who) -}}
{{- end -}}
{{- $host := regexReplaceAll ":[0-9]+$" $u.host "" | trimPrefix "[" | trimSuffix "]" | lower -}}
{{- if or (eq $host "localhost") (hasSuffix ".localhost" $host) (regexMatch "^127\\." $host) (eq $host "::1") (eq $host "0.0.0.0") (eq $host "::") -}}
{{- fail (printf "%s %q is a loopback address, which %s cannot reach: inside a pod it is the pod itself. Give an address of the hub that other machines reach, e.g. https://hub.example.com:6443" .value $url .who) -}}
{{- end -}}
{{- end }}
