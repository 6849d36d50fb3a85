package window

import "strings"

// FallbackLocale is the message locale the window's WebView gets when the
// process runs in the C/POSIX locale.
const FallbackLocale = "en_US.UTF-8"

// localeFix returns the environment variable to set (or "" for none) so
// that the WebView's navigator.language is a BCP 47 tag. WebKitGTK takes
// it from the messages locale (LC_ALL, LC_MESSAGES, LANG); in the C or
// POSIX locale, the default of containers and CI machines, it becomes "C",
// which Intl rejects (RangeError: invalid language tag: C), and a
// dashboard that formats numbers or dates does not start.
func localeFix(getenv func(string) string) (key, value string) {
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := getenv(k)
		if v == "" {
			continue
		}
		base, _, _ := strings.Cut(v, ".")
		if base != "C" && base != "POSIX" {
			return "", ""
		}
		if k == "LC_ALL" {
			return "LC_ALL", FallbackLocale
		}
		return "LC_MESSAGES", FallbackLocale
	}
	return "LC_MESSAGES", FallbackLocale
}
