package com.example.shop;

import java.util.List;
import static java.util.Objects.requireNonNull;

/**
 * An order line.
 */
public record Line(String sku, int qty) {}

public final class Cart<T extends Comparable<T>> {
    private final List<T> items = new java.util.ArrayList<>();

    @Override
    public String toString() {
        return "Cart" + items; // items
    }

    public static <U extends Comparable<U>> Cart<U> of(List<U> items) throws IllegalStateException {
        Cart<U> cart = new Cart<>();
        outer:
        for (U item : requireNonNull(items)) {
            switch (item.hashCode() % 3) {
                case 0: continue outer;
                default: cart.items.add(item);
            }
        }
        char c = '\n';
        long n = 0x1FL + 1_000L;
        String text = """
            hello "world"
            """;
        return cart;
    }

    int[] sizes(int... xs) { return xs; }
}
