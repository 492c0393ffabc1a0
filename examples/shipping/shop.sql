-- The shop's orders, as the chapter's shipping pipeline captures them.
CREATE TABLE orders (
  id       serial PRIMARY KEY,
  customer text NOT NULL,
  item     text NOT NULL,
  quantity integer NOT NULL,
  amount   numeric(10,2) NOT NULL,
  status   text NOT NULL DEFAULT 'PLACED'
);
INSERT INTO orders (customer, item, quantity, amount, status) VALUES
  ('acme',    'pallet jack',  2, 1180.00, 'PLACED'),
  ('globex',  'shrink wrap', 40,  212.40, 'PLACED'),
  ('initech', 'label roll',  12,   57.60, 'SHIPPED'),
  ('umbrella','crate',        5,  325.00, 'PLACED');
