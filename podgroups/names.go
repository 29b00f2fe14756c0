package podgroups

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Name limits of the places a name goes.
const (
	// maxSubdomain is a DNS-1123 subdomain's length: object names.
	maxSubdomain = validation.DNS1123SubdomainMaxLength
	// maxLabel is a DNS-1123 label's and a label value's length: template
	// and subgroup names, and coscheduling's pod label.
	maxLabel = validation.DNS1123LabelMaxLength
)

// ObjectName is the name of the object that target builds for the group
// named group (GetGangGroups' name, pg-<uid>-<definition>[-<key>…]): the
// group name itself when it is a valid name there, else a sanitised form
// that keeps it unique. The names are the same across calls, so a webhook
// that places one pod names the object a controller created for its group.
// The name is a DNS subdomain of up to 253 characters, or of up to 63 for
// coscheduling, which links pods by a label whose value is the name.
func ObjectName(target Target, group string) string {
	if target == Coscheduling {
		return dnsName(group, maxLabel, false)
	}
	return dnsName(group, maxSubdomain, false)
}

// dnsName returns s when it is a DNS-1123 subdomain (label, when label is
// set) of at most max characters. Otherwise it lowercases s, turns every
// other character into '-', trims what cannot start or end a name, cuts it
// to leave room, and appends '-' and 8 hex digits of s's SHA-256, so that
// two names that sanitise alike stay apart.
func dnsName(s string, max int, label bool) string {
	if len(s) <= max && validName(s, label) {
		return s
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || !label && r == '.'
		if !ok {
			if !dash {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		b.WriteRune(r)
		dash = false
	}
	sum := sha256.Sum256([]byte(s))
	suffix := hex.EncodeToString(sum[:4])
	base := strings.Trim(b.String(), "-.")
	if room := max - len(suffix) - 1; len(base) > room {
		base = strings.TrimRight(base[:room], "-.")
	}
	if base == "" {
		return "g-" + suffix
	}
	return base + "-" + suffix
}

func validName(s string, label bool) bool {
	if label {
		return len(validation.IsDNS1123Label(s)) == 0
	}
	return len(validation.IsDNS1123Subdomain(s)) == 0
}
