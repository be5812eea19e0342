//! The fuzzer's pseudo-random numbers: SplitMix64 (Steele, Lea and Flood, 2014), small, fast and
//! fully determined by its seed, so that a seed names a case on every machine.

/// The SplitMix64 increment (the golden ratio in 64 bits).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The finaliser of SplitMix64: a bijection that spreads every input bit over the output.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of case `index` of a run seeded with `seed`. Case 0's seed is the run's seed itself,
/// so that `--seed S --cases 1` replays exactly the case whose seed was printed as S.
pub(crate) fn case_seed(seed: u64, index: u64) -> u64 {
    if index == 0 {
        seed
    } else {
        mix(seed.wrapping_add(index.wrapping_mul(GAMMA)))
    }
}

/// A SplitMix64 generator.
#[derive(Debug, Clone)]
pub(crate) struct Rng {
    state: u64,
}

impl Rng {
    /// The generator for one case.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// A number in `0..n` (`n` > 0; the bias of the modulo is negligible for the small `n` here).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        (self.next_u64() % n as u64) as usize
    }

    /// A number in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability `percent` / 100.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    /// One of `items` (not empty).
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index into `weights`, each chosen in proportion to its weight (the sum is not zero).
    pub(crate) fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        let mut roll = self.next_u64() % total;
        for (i, w) in weights.iter().enumerate() {
            let w = u64::from(*w);
            if roll < w {
                return i;
            }
            roll -= w;
        }
        weights.len() - 1
    }

    /// A short lower-case word, for ids and names that must not collide with anything real.
    pub(crate) fn word(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from(b'a' + (self.next_u64() % 26) as u8))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_numbers() {
        let a: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..8).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::new(42);
            (0..8).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a[0], Rng::new(43).next_u64());
    }

    #[test]
    fn splitmix64_matches_its_reference_output() {
        // The first output of the reference implementation seeded with 0.
        assert_eq!(Rng::new(0).next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn case_zero_is_the_run_seed_and_the_others_differ() {
        assert_eq!(case_seed(7, 0), 7);
        let seeds: std::collections::BTreeSet<u64> = (0..1000).map(|i| case_seed(7, i)).collect();
        assert_eq!(seeds.len(), 1000);
    }

    #[test]
    fn weighted_choices_follow_their_weights() {
        let mut r = Rng::new(1);
        let mut counts = [0u32; 3];
        for _ in 0..10_000 {
            counts[r.weighted(&[1, 0, 3])] += 1;
        }
        assert_eq!(counts[1], 0);
        assert!(counts[2] > counts[0] * 2, "{counts:?}");
    }
}
