{{- define "mesh.labels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
