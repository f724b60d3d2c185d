{{/* Full name of the release's objects. */}}
{{- define "ticketfair.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "ticketfair.selectorLabels" -}}
app.kubernetes.io/name: ticketfair-operator
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "ticketfair.labels" -}}
{{ include "ticketfair.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ticketfair
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "ticketfair.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "ticketfair.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "ticketfair.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
