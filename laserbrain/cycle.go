package laserbrain

// period returns the smallest p in cycleMinPeriod..cycleMaxPeriod such that
// the last need = max(cycleNeedFloor, cycleRepeats·p) spellings of the
// ground trail repeat with period p and hold more than one distinct value;
// 0 when there is none. One spelling held for a long time is a settled state
// or a stall, not an oscillation, hence the distinct-value condition.
func period(trail []string) int {
	for p := cycleMinPeriod; p <= cycleMaxPeriod; p++ {
		need := max(cycleNeedFloor, cycleRepeats*p)
		if len(trail) < need {
			continue
		}
		tail := trail[len(trail)-need:]
		if repeatsWith(tail, p) && !allSame(tail) {
			return p
		}
	}
	return 0
}

func repeatsWith(tail []string, p int) bool {
	for i := p; i < len(tail); i++ {
		if tail[i] != tail[i%p] {
			return false
		}
	}
	return true
}

func allSame(tail []string) bool {
	for _, s := range tail[1:] {
		if s != tail[0] {
			return false
		}
	}
	return true
}
