package content

// MaxName bounds the length of a template, rule set or creature kind name.
const MaxName = 32

// checkName checks a name of a template, rule set or creature kind: 1 to
// [MaxName] bytes of lower-case ASCII letters, digits, '-' and '_',
// starting with a letter. what says which name it is.
func checkName(what, s string) error {
	if s == "" {
		return invalidf("%s: empty name", what)
	}
	if len(s) > MaxName {
		return invalidf("%s %.40q...: name longer than %d bytes", what, s, MaxName)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '_')
		if !ok {
			return invalidf("%s %q: a name is lower-case letters, digits, '-' and '_', starting with a letter", what, s)
		}
	}
	return nil
}
