package argo

import "github.com/kartalua/karta/internal/argohealth"

// Argo CD's health status words (gitops-engine's HealthStatusCode).
const (
	StatusHealthy     = argohealth.StatusHealthy
	StatusProgressing = argohealth.StatusProgressing
	StatusDegraded    = argohealth.StatusDegraded
	StatusSuspended   = argohealth.StatusSuspended
	StatusMissing     = argohealth.StatusMissing
	StatusUnknown     = argohealth.StatusUnknown
)

// Statuses returns Argo CD's health status words.
func Statuses() []string { return argohealth.Statuses() }

// Health is what a health script returned. An empty Status means the
// script made no assessment (it returned nil, {} or no status), as Argo
// CD's empty HealthStatus does.
type Health = argohealth.Health
