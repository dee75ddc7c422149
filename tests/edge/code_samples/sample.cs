using System;
using System.Collections.Generic;

namespace Shop.Orders
{
    [Serializable]
    public sealed class Order
    {
        private readonly List<Line> _lines = new();

        public decimal Total { get; private set; }

        [Obsolete("use Add(Line)")]
        public void AddLine(string sku, int qty)
        {
            // add and recompute
            _lines.Add(new Line(sku, qty));
            Total += qty * 9.99m;
        }

        public static async Task<Order?> LoadAsync(int id, CancellationToken ct = default)
        {
            var json = $"{{\"id\": {id}}}";
            var path = @"C:\orders\" + id;
            var raw = """
                multi-line "raw" text
                """;
            /* nothing
               here */
            return await Task.FromResult<Order?>(null);
        }

        public IEnumerable<string> Skus() => _lines.Select(l => l.Sku);
    }

    public record Line(string Sku, int Qty);
}
