//! Helpers shared by the targets: how a stream is cut into reads.

/// A deterministic cutter: splits a byte stream into reads of pseudo-random lengths drawn from
/// `seed`, so that a target can compare one read of everything with many small reads.
pub(crate) fn chunks(data: &[u8], seed: u8) -> Vec<&[u8]> {
    // Lengths 1..=max, with max between 1 (byte by byte) and 64.
    let max = [1u64, 2, 3, 7, 16, 64][usize::from(seed % 6)];
    let mut state = u64::from(seed).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        state = splitmix(state);
        let n = usize::try_from(state % max + 1)
            .unwrap_or(1)
            .min(rest.len());
        let (head, tail) = rest.split_at(n);
        out.push(head);
        rest = tail;
    }
    out
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_stream_in_order() {
        let data: Vec<u8> = (0..=255).collect();
        for seed in 0..=255 {
            let parts = chunks(&data, seed);
            assert_eq!(parts.concat(), data, "seed {seed}");
            assert!(parts.iter().all(|p| !p.is_empty()));
        }
        assert_eq!(chunks(&data, 0).len(), 256, "seed 0 cuts byte by byte");
    }
}
