{{/* The chart's name, overridable. */}}
{{- define "karta.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name: the release name, with the chart's unless it contains it already. */}}
{{- define "karta.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The labels of every object. */}}
{{- define "karta.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "karta.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The labels that select the controller's pods. */}}
{{- define "karta.selectorLabels" -}}
app.kubernetes.io/name: {{ include "karta.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The controller's ServiceAccount. */}}
{{- define "karta.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "karta.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name: name an existing ServiceAccount when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The name of the leader election Lease. */}}
{{- define "karta.leaseName" -}}
{{- include "karta.fullname" . }}
{{- end }}

{{/* The webhook Service and its in-cluster DNS name. */}}
{{- define "karta.webhookService" -}}
{{- printf "%s-webhook" (include "karta.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "karta.webhookHost" -}}
{{- printf "%s.%s.svc" (include "karta.webhookService" .) .Release.Namespace }}
{{- end }}

{{/* The Secret holding the webhook's certificate. */}}
{{- define "karta.webhookSecret" -}}
{{- if .Values.webhook.certManager.enabled }}
{{- printf "%s-webhook-tls" (include "karta.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- required "webhook.enabled needs a certificate: set webhook.tls.secretName to a kubernetes.io/tls Secret, or webhook.certManager.enabled" .Values.webhook.tls.secretName }}
{{- end }}
{{- end }}

{{/* The cert-manager Certificate's name. */}}
{{- define "karta.certificate" -}}
{{- printf "%s-webhook" (include "karta.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Where the webhook's certificate is mounted in the container. */}}
{{- define "karta.tlsDir" -}}
/etc/karta/tls
{{- end }}

{{/* Checks of value combinations that cannot work. */}}
{{- define "karta.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicaCount > 1 needs leaderElection.enabled: without it every replica writes status" }}
{{- end }}
{{- if and .Values.karmada.webhookConfiguration (not .Values.webhook.enabled) }}
{{- fail "karmada.webhookConfiguration needs webhook.enabled: Karmada calls the controller's webhook" }}
{{- end }}
{{- if and .Values.gangOutput.enabled (not .Values.webhook.enabled) }}
{{- fail "gangOutput.enabled needs webhook.enabled: the pod webhook is served on the webhook's port" }}
{{- end }}
{{- end }}
