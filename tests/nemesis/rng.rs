//! SplitMix64: a small seeded generator, so a seed replays the same schedule and the same
//! choices of operations.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// In `low..high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low).max(1)
    }

    /// An index into `weights`, each chosen as often as its weight says.
    pub fn weighted(&mut self, weights: &[u64]) -> usize {
        let mut pick = self.next() % weights.iter().sum::<u64>();
        for (i, weight) in weights.iter().enumerate() {
            if pick < *weight {
                return i;
            }
            pick -= weight;
        }
        weights.len() - 1
    }
}
