//! Host → zone lookup cost as the number of zones grows (1, 1k, 100k): an exact hit, a
//! subdomain hit (one parent step), a deep miss (every parent tried) and a mixed-case Host with
//! a port. The index is a hash map built at load, so the cost should stay flat with size and
//! grow only with the number of labels tried.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use escgate::zones::ZoneIndex;

// Measured with the allocator the escgate binary ships with.
#[global_allocator]
static ALLOCATOR: escgate::memory::MiMalloc = escgate::memory::MiMalloc;

fn zone_names(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("zone{i}.example")).collect()
}

fn lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("zone_lookup");
    for count in [1usize, 1_000, 100_000] {
        let names = zone_names(count);
        let index = ZoneIndex::build(names.iter().map(String::as_str));
        let last = format!("zone{}.example", count - 1);
        let cases = [
            ("exact", last.clone()),
            ("subdomain", format!("www.{last}")),
            (
                "mixed_case_port",
                format!("WWW.{}:8080", last.to_uppercase()),
            ),
            ("miss_deep", "a.b.c.d.unknown.invalid".to_string()),
        ];
        for (case, host) in cases {
            group.bench_with_input(BenchmarkId::new(case, count), &host, |b, host| {
                b.iter(|| index.lookup(black_box(host)))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, lookup);
criterion_main!(benches);
